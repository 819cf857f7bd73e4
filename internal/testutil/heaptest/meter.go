// Package heaptest measures the heap of a benchmark run, its peak while
// the run goes on and what it still holds afterwards, for benchmarks that
// show memory staying flat as an input grows (batches, spool size, files).
package heaptest // import "github.com/sandboxaudit/sandboxaudit/internal/testutil/heaptest"

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// Reading runtime/metrics does not stop the world (runtime.ReadMemStats
// does), so they can be sampled often without disturbing the run.
const (
	// objectsBytes is the heap held by objects, live or dead but not yet
	// swept: what the heap really holds between collections, so its peak
	// depends on GOGC as much as on the run.
	objectsBytes = "/memory/classes/heap/objects:bytes"
	// liveBytes is the heap found live by the last collection: its peak
	// is the run's working set, whatever the garbage collector's pacing.
	liveBytes = "/gc/heap/live:bytes"
)

// sampleEvery is the sampling period: short next to a batch's work, long
// enough that the sampler costs nothing measurable.
const sampleEvery = time.Millisecond

// Figures are bytes above the heap when the Meter started.
type Figures struct {
	Peak     int64 // highest heap sampled, garbage included
	PeakLive int64 // highest live heap found by a collection during the run
	Retained int64 // live heap after a collection at the end
}

// Meter samples the heap from Start until Stop.
type Meter struct {
	base uint64
	peak [2]uint64 // objectsBytes, liveBytes; written by the sampler only
	stop chan struct{}
	done chan struct{}
}

// Start collects garbage, takes the baseline (the live heap now) and
// samples the heap every millisecond until Stop.
func Start() *Meter {
	m := &Meter{base: liveHeap(), stop: make(chan struct{}), done: make(chan struct{})}
	m.peak = [2]uint64{m.base, m.base}
	go m.sample()
	return m
}

func (m *Meter) sample() {
	defer close(m.done)
	s := []metrics.Sample{{Name: objectsBytes}, {Name: liveBytes}}
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		m.record(s)
		select {
		case <-m.stop:
			m.record(s) // what the run holds at its very end
			return
		case <-t.C:
		}
	}
}

func (m *Meter) record(s []metrics.Sample) {
	metrics.Read(s)
	for i := range m.peak {
		m.peak[i] = max(m.peak[i], s[i].Value.Uint64())
	}
}

// Stop ends sampling and returns the figures. Keep what the run built
// reachable until Stop returns (runtime.KeepAlive) so that Retained counts
// it, and the run's input made before Start too, or Retained comes out
// short by it.
func (m *Meter) Stop() Figures {
	close(m.stop)
	<-m.done
	return Figures{
		Peak:     int64(m.peak[0] - m.base),
		PeakLive: int64(m.peak[1]) - int64(m.base),
		Retained: int64(liveHeap()) - int64(m.base),
	}
}

// Report is Stop, reported as peak-heap-B, peak-live-heap-B and
// retained-heap-B.
func (m *Meter) Report(b *testing.B) {
	f := m.Stop()
	b.ReportMetric(float64(f.Peak), "peak-heap-B")
	b.ReportMetric(float64(f.PeakLive), "peak-live-heap-B")
	b.ReportMetric(float64(f.Retained), "retained-heap-B")
}

// liveHeap is the heap right after a full collection. runtime.GC returns
// once sweeping is done too, so only live objects are left to count.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: objectsBytes}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
