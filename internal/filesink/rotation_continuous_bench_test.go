package filesink

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRotationCostContinuous is what rotation and compression cost
// an encoding writer that goes on over many segments, with all of the
// compression counted. In each iteration each of three sinks (no
// rotation; a segment every 8 MB; the same, compressed) takes a turn, in
// an order that turns from one iteration to the next: a new sink writes
// 16 segments' worth of batches (20 batches of 1,000 lines each, encoded
// in the timed loop, fsync batch) back to back, and the turn ends when
// every closed segment is compressed. Nothing is left out of the timed
// turn, so compression that falls behind the writer is paid for where it
// lands. It reports none/off and zstd/off (the plain sink's turn over the
// rotating one's: 1.00 costs nothing); zstd-tail, the part of the
// compressed turn spent waiting for the last compression after the last
// batch; zstd-cpu/off, the process's processor time (user and system) in
// a compressed turn over a plain one, which a busy machine's load does
// not change much; runq-ms-off and runq-ms-zstd, the time goroutines
// waited for a processor per turn (the runtime's scheduling latencies);
// and assist-ms-off and assist-ms-zstd, the garbage collector's marking
// done per turn by the goroutines that allocate (the writer) because its
// own workers had no processor to do it on; stop-ms-off and
// stop-ms-zstd, the time taken per turn to stop the world for the
// collector (every processor's goroutine must reach a safe point, the
// compressor's too).
func BenchmarkRotationCostContinuous(b *testing.B) {
	const perSegment, segments = 20, 16
	segment := int64(0)
	for j := range perSegment {
		segment += int64(len(auditBatch(j, 1000)))
	}
	rots := []*Rotation{
		nil,
		{MaxBytes: segment, MaxBackups: 4},
		{MaxBytes: segment, MaxBackups: 4, Compress: true, grace: time.Nanosecond},
	}
	dir := b.TempDir()
	spent := make([]time.Duration, len(rots))
	cpu := make([]time.Duration, len(rots))
	runq := make([]time.Duration, len(rots))
	assist := make([]time.Duration, len(rots))
	stop := make([]time.Duration, len(rots))
	var tail time.Duration
	turn := 0
	for b.Loop() {
		for k := range rots {
			i := (turn + k) % len(rots)
			cpu0, runq0, assist0, stop0 := processCPU(b), schedWait(), gcAssist(), gcStopping()
			took, waited := continuousTurn(b, filepath.Join(dir, fmt.Sprint(turn, "-", i)), rots[i], perSegment*segments, perSegment)
			cpu[i] += processCPU(b) - cpu0
			runq[i] += schedWait() - runq0
			assist[i] += gcAssist() - assist0
			stop[i] += gcStopping() - stop0
			spent[i] += took
			if i == 2 {
				tail += waited
			}
		}
		turn++
	}
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "none/off")
	b.ReportMetric(float64(spent[0])/float64(spent[2]), "zstd/off")
	b.ReportMetric(float64(tail)/float64(spent[2]), "zstd-tail")
	b.ReportMetric(float64(cpu[2])/float64(cpu[0]), "zstd-cpu/off")
	b.ReportMetric(float64(runq[0].Milliseconds())/float64(turn), "runq-ms-off")
	b.ReportMetric(float64(runq[2].Milliseconds())/float64(turn), "runq-ms-zstd")
	b.ReportMetric(float64(assist[0].Milliseconds())/float64(turn), "assist-ms-off")
	b.ReportMetric(float64(assist[2].Milliseconds())/float64(turn), "assist-ms-zstd")
	b.ReportMetric(float64(stop[0].Microseconds())/1e3/float64(turn), "stop-ms-off")
	b.ReportMetric(float64(stop[2].Microseconds())/1e3/float64(turn), "stop-ms-zstd")
}

// gcAssist is the processor time goroutines have spent marking for the
// garbage collector while allocating, so far (the runtime updates it at
// the end of each cycle).
func gcAssist() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}

// processCPU is the processor time the process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadSwitches is how many times the process's threads have left a
// processor, by choice or not.
func threadSwitches(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Nvcsw + ru.Nivcsw
}

// schedWait is about how long goroutines have waited, runnable, for a
// processor so far.
func schedWait() time.Duration { return histogramSum("/sched/latencies:seconds") }

// gcStopping is about how long stopping the world for the collector has
// taken so far.
func gcStopping() time.Duration { return histogramSum("/sched/pauses/stopping/gc:seconds") }

// histogramSum adds up one of the runtime's latency histograms, each
// bucket counted at its lower bound.
func histogramSum(name string) time.Duration {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := s[0].Value.Float64Histogram()
	var sum float64
	for i, n := range h.Counts {
		if lo := h.Buckets[i]; lo > 0 && !math.IsInf(lo, 0) {
			sum += lo * float64(n)
		}
	}
	return time.Duration(sum * float64(time.Second))
}

// continuousTurn writes batches encoded batches to a new sink in dir and,
// with compression on, waits for the last segment's compression; both are
// timed. The sink's setup and closing and the removal of dir are not.
func continuousTurn(b *testing.B, dir string, rot *Rotation, batches, perSegment int) (took, waited time.Duration) {
	b.StopTimer()
	var r *Rotation
	if rot != nil {
		c := *rot
		r = &c
	}
	path := filepath.Join(dir, "events.jsonl")
	s, err := New(Options{Path: path, Fsync: FsyncBatch, Rotation: r})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.StartTimer()
	start := time.Now()
	for j := range batches {
		// The same bytes for each segment, so each segment ends on a batch.
		if err := s.WriteBatch(ctx, testSession, auditBatch(j%perSegment, 1000)); err != nil {
			b.Fatal(err)
		}
	}
	if r != nil && r.Compress {
		waited = waitAllCompressed(b, path)
	}
	took = time.Since(start)
	b.StopTimer()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	return took, waited
}
