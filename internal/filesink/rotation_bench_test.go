package filesink

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
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
// without rotation, to one that rotates at 16 MB, and to one that rotates
// and compresses, in turn in each iteration, and reports the time spent in
// each rotating sink over the time spent in the plain one: the cost of
// rotation and of compression, with the drift of a shared machine spread
// over all three.
func BenchmarkRotationCostInterleaved(b *testing.B) {
	data := batchOf(1000, 400)
	dir := b.TempDir()
	var sinks []*Sink
	for name, rot := range map[string]*Rotation{
		"a-off":  nil,
		"b-none": {MaxBytes: 16 << 20, MaxBackups: 4},
		"c-zstd": {MaxBytes: 16 << 20, Compress: true, MaxBackups: 4},
	} {
		s, err := New(Options{Path: filepath.Join(dir, name, "events.jsonl"), Fsync: FsyncBatch, Rotation: rot})
		if err != nil {
			b.Fatal(err)
		}
		sinks = append(sinks, s)
	}
	slices.SortFunc(sinks, func(x, y *Sink) int { return strings.Compare(x.tmpl.static, y.tmpl.static) })
	ctx := context.Background()
	spent := make([]time.Duration, len(sinks))
	for b.Loop() {
		for i, s := range sinks {
			start := time.Now()
			for range 40 {
				if err := s.WriteBatch(ctx, testSession, data); err != nil {
					b.Fatal(err)
				}
			}
			spent[i] += time.Since(start)
		}
	}
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "rotation/off")
	b.ReportMetric(float64(spent[2])/float64(spent[0]), "rotation+zstd/off")
	b.StopTimer()
	var errs []error
	for _, s := range sinks {
		errs = append(errs, s.Close())
	}
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
}
