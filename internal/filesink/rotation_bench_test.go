package filesink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkWriteBatchRotation is the file sink's throughput with rotation
// and zstd compression off and on, in the same run: 400 KB batches of
// 1,000 lines, a segment every 16 MB (40 batches), each compressed on the
// maintainer's goroutine while the writer goes on. The cost of rotation is
// the ratio of the two lines/s figures.
func BenchmarkWriteBatchRotation(b *testing.B) {
	data := batchOf(1000, 400)
	for _, tc := range []struct {
		name string
		rot  *Rotation
	}{
		{"rotation=off", nil},
		{"rotation=on/compression=none", &Rotation{MaxBytes: 16 << 20}},
		{"rotation=on/compression=zstd", &Rotation{MaxBytes: 16 << 20, Compress: true, MaxBackups: 4}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := New(Options{Path: filepath.Join(b.TempDir(), "events.jsonl"), Fsync: FsyncBatch, Rotation: tc.rot})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := s.WriteBatch(ctx, testSession, data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "lines/s")
			b.StopTimer()
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkRotationCostInterleaved is what rotation costs the file sink's
// throughput, on and off in the same run. Three sinks (no rotation; a
// segment every 16 MB; the same, compressed) each write 16 MB (40 batches
// of 1,000 lines, fsync batch) in turn in every iteration, in an order
// that turns from one iteration to the next. Each turn of a rotating sink
// starts with a rotation, and the segment it closes is compressed while
// the turn goes on. Before the next turn, untimed, the loop waits until
// the sink's compression is done, so it never slows another sink's turn.
//
// writer=encoder is the main case, a collector's exporter: each batch is
// encoded (formatted line by line, about the per-line CPU of the
// collector's path, bench-e2e's rate) and then written, both timed.
// writer=max writes ready batches back to back (a writer that saturates
// the disk: the worst case); writer=20MBps one every 20 ms (a heavy trail
// below the disk's speed, WriteBatch alone timed). It reports each
// rotating sink's throughput over the plain one's (none/off and zstd/off:
// 1.00 costs nothing, 0.95 costs 5%; for the paced writer it is the
// inverse ratio of the mean batch latency), and zstd-lag: the compression
// time left after the turn ended, over the turn's time.
func BenchmarkRotationCostInterleaved(b *testing.B) {
	for _, w := range []rotationWriter{
		{name: "writer=encoder", encode: true},
		{name: "writer=max"},
		{name: "writer=20MBps", every: 20 * time.Millisecond},
	} {
		b.Run(w.name, func(b *testing.B) { rotationCost(b, w) })
	}
}

// rotationWriter is how a turn's batches come: encoded in the timed loop,
// or ready and sent every so often (0: back to back).
type rotationWriter struct {
	name   string
	encode bool
	every  time.Duration
}

func rotationCost(b *testing.B, w rotationWriter) {
	const perTurn = 40
	var batches [perTurn][]byte
	for i := range batches {
		batches[i] = auditBatch(i, 1000)
	}
	segment := int64(0)
	for _, data := range batches {
		segment += int64(len(data))
	}
	dir := b.TempDir()
	var sinks []*Sink
	for _, rot := range []*Rotation{
		nil,
		{MaxBytes: segment, MaxBackups: 4},
		{MaxBytes: segment, MaxBackups: 4, Compress: true, grace: time.Nanosecond},
	} {
		s, err := New(Options{Path: filepath.Join(dir, fmt.Sprint(len(sinks)), "events.jsonl"), Fsync: FsyncBatch, Rotation: rot})
		if err != nil {
			b.Fatal(err)
		}
		sinks = append(sinks, s)
	}
	ctx := context.Background()
	spent := make([]time.Duration, len(sinks))
	var lag, turnTime time.Duration
	turn := 0
	for b.Loop() {
		for k := range sinks {
			i := (turn + k) % len(sinks)
			begin := time.Now()
			next := begin
			for j, data := range batches {
				time.Sleep(time.Until(next))
				next = next.Add(w.every)
				start := time.Now()
				if w.encode {
					data = auditBatch(j, 1000) // the same bytes, so each turn rotates once
				}
				if err := sinks[i].WriteBatch(ctx, testSession, data); err != nil {
					b.Fatal(err)
				}
				spent[i] += time.Since(start)
			}
			if sinks[i].rot != nil && sinks[i].rot.Compress {
				turnTime += time.Since(begin)
				b.StopTimer()
				lag += waitAllCompressed(b, sinks[i].tmpl.static)
				b.StartTimer()
			}
		}
		turn++
	}
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "none/off")
	b.ReportMetric(float64(spent[0])/float64(spent[2]), "zstd/off")
	b.ReportMetric(float64(lag)/float64(turnTime), "zstd-lag")
	b.StopTimer()
	var errs []error
	for _, s := range sinks {
		errs = append(errs, s.Close())
	}
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
}

// waitAllCompressed waits until every closed segment of path is
// compressed, and returns how long that took.
func waitAllCompressed(b *testing.B, path string) time.Duration {
	start := time.Now()
	for deadline := start.Add(time.Minute); ; {
		segs, err := Segments(path)
		if err != nil {
			b.Fatal(err)
		}
		done := true
		for _, s := range segs {
			if !s.Compressed {
				done = false
				break
			}
			if _, err := os.Lstat(s.Plain); err == nil {
				done = false
				break
			}
		}
		if done {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			b.Fatalf("segments of %s not compressed after a minute", path)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// BenchmarkCompressSegment is the compressor alone on a 16 MB segment of
// audit lines (its MB/s is of the plain segment), with the process's
// processor time and thread switches per segment, which a busy machine's
// load changes less than the MB/s.
func BenchmarkCompressSegment(b *testing.B) {
	var data []byte
	for i := range 40 {
		data = append(data, auditBatch(i, 1000)...)
	}
	dst := filepath.Join(b.TempDir(), "seg.jsonl.zst")
	var c compressor
	b.SetBytes(int64(len(data)))
	cpu0, sw0 := processCPU(b), threadSwitches(b)
	for b.Loop() {
		if err := c.write(context.Background(), bytes.NewReader(data), dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(threadSwitches(b)-sw0)/float64(b.N), "switches/op")
	fi, err := os.Stat(dst)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(data))/float64(fi.Size()), "ratio")
}

// auditBatch is n lines shaped like canonical audit events, about 400
// bytes each, with unique ids and times: they compress as a real trail
// does, not as repeated bytes do.
func auditBatch(seed, n int) []byte {
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	ops := []string{"exec", "read", "write", "list", "stop"}
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"version":1,"event_id":"%08x-%04x-4%03x-8%03x-%012x","ts":"2026-12-06T08:%02d:%02d.%06dZ",`,
			rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xfff, rng.Uint32()&0xfff, rng.Uint64()&0xffffffffffff,
			i/60%60, i%60, rng.IntN(1000000))
		fmt.Fprintf(&b, `"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-%012x","seq":%d,"phase":"finish","op":"%s",`,
			seed%7, seed*n+i, ops[rng.IntN(len(ops))])
		fmt.Fprintf(&b, `"trace_id":"%016x%016x","span_id":"%016x","args":{"path":"/workspace/src/module_%d/file_%d.py"},`,
			rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.IntN(50), rng.IntN(400))
		fmt.Fprintf(&b, `"result":{"exit_code":%d,"duration_ms":%d,"bytes":%d}}`+"\n", rng.IntN(3), rng.IntN(5000), rng.IntN(1<<20))
	}
	return b.Bytes()
}
