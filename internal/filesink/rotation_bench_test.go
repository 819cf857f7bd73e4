package filesink

import (
	"context"
	"errors"
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

// BenchmarkRotationCostInterleaved writes 16 MB (40 batches) to a sink
// without rotation, then to one that rotates at 16 MB and compresses,
// alternately in each iteration, and reports the ratio of the time spent
// in the second to the first: the cost of rotation and compression, with
// the drift of a shared machine spread over both.
func BenchmarkRotationCostInterleaved(b *testing.B) {
	data := batchOf(1000, 400)
	dir := b.TempDir()
	off, err := New(Options{Path: filepath.Join(dir, "off", "events.jsonl"), Fsync: FsyncBatch})
	if err != nil {
		b.Fatal(err)
	}
	on, err := New(Options{Path: filepath.Join(dir, "on", "events.jsonl"), Fsync: FsyncBatch,
		Rotation: &Rotation{MaxBytes: 16 << 20, Compress: true, MaxBackups: 4}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var spent [2]time.Duration
	for b.Loop() {
		for i, s := range []*Sink{off, on} {
			start := time.Now()
			for range 40 {
				if err := s.WriteBatch(ctx, testSession, data); err != nil {
					b.Fatal(err)
				}
			}
			spent[i] += time.Since(start)
		}
	}
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "on/off")
	b.StopTimer()
	if err := errors.Join(off.Close(), on.Close()); err != nil {
		b.Fatal(err)
	}
}
