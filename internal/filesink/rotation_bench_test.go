package filesink

import (
	"context"
	"path/filepath"
	"testing"
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
