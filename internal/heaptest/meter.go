// Package heaptest measures the heap of a benchmark run, its peak while
// the run goes on and what it still holds afterwards, for benchmarks that
// show memory staying flat as an input grows (batches, spool size, files).
package heaptest // import "github.com/sandboxaudit/sandboxaudit/internal/heaptest"

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// objectsBytes is the heap held by objects, live or dead but not yet
// swept: what the heap really holds between collections. Reading it does
// not stop the world (runtime.ReadMemStats does), so it can be sampled
// often without disturbing the run.
const objectsBytes = "/memory/classes/heap/objects:bytes"

// sampleEvery is the sampling period: short next to a batch's work, long
// enough that the sampler costs nothing measurable.
const sampleEvery = time.Millisecond

// Meter samples the heap from Start until Stop.
type Meter struct {
	base uint64
	peak uint64 // written by the sampler only, read after done
	stop chan struct{}
	done chan struct{}
}

// Start collects garbage, takes the baseline (the live heap now) and
// samples the heap every millisecond until Stop.
func Start() *Meter {
	m := &Meter{base: liveHeap(), stop: make(chan struct{}), done: make(chan struct{})}
	m.peak = m.base
	go m.sample()
	return m
}

func (m *Meter) sample() {
	defer close(m.done)
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		m.peak = max(m.peak, read())
		select {
		case <-m.stop:
			m.peak = max(m.peak, read())
			return
		case <-t.C:
		}
	}
}

// Stop ends sampling and returns, above the baseline, the highest sample
// (garbage included: the heap the run needed) and the live heap after a
// collection (what the run keeps). Keep what the run built reachable until
// Stop returns (runtime.KeepAlive) so that retained counts it, and the
// run's input made before Start too, or retained comes out short by it.
func (m *Meter) Stop() (peak, retained int64) {
	close(m.stop)
	<-m.done
	return int64(m.peak - m.base), int64(liveHeap()) - int64(m.base)
}

// Report is Stop, reported as peak-heap-B and retained-heap-B.
func (m *Meter) Report(b *testing.B) {
	peak, retained := m.Stop()
	b.ReportMetric(float64(peak), "peak-heap-B")
	b.ReportMetric(float64(retained), "retained-heap-B")
}

// liveHeap is the heap right after a full collection. runtime.GC returns
// once sweeping is done too, so only live objects are left to count.
func liveHeap() uint64 {
	runtime.GC()
	return read()
}

func read() uint64 {
	s := []metrics.Sample{{Name: objectsBytes}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
