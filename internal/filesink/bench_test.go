package filesink

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// batchOf returns n canonical-looking lines of about size bytes each.
func batchOf(n, size int) []byte {
	var b bytes.Buffer
	for i := range n {
		head := fmt.Sprintf("{\"seq\":%d,\"pad\":\"", i)
		b.WriteString(head)
		b.WriteString(strings.Repeat("a", size-len(head)-3))
		b.WriteString("\"}\n")
	}
	return b.Bytes()
}

func BenchmarkWriteBatch(b *testing.B) {
	data := batchOf(1000, 400)
	for _, mode := range []FsyncMode{FsyncNever, FsyncBatch, FsyncAlways} {
		b.Run("fsync="+string(mode), func(b *testing.B) {
			s, err := New(Options{Path: filepath.Join(b.TempDir(), "{session_id}.jsonl"), Fsync: mode})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			ctx := context.Background()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := s.WriteBatch(ctx, testSession, data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

// BenchmarkWriteBatchConcurrent is many writers appending one line each to
// one file, as single-event POSTs from many sandbox sessions do (one batch
// per HttpProxySink request): with fsync=batch, writers that queue while
// another syncs share the next sync. syncs/batch is how many fdatasyncs a
// batch cost on average; fsync=never is the ceiling.
func BenchmarkWriteBatchConcurrent(b *testing.B) {
	line := batchOf(1, 400)
	for _, mode := range []FsyncMode{FsyncNever, FsyncBatch} {
		for _, perCPU := range []int{1, 8} {
			b.Run(fmt.Sprintf("fsync=%s/writers-per-cpu=%d", mode, perCPU), func(b *testing.B) {
				var syncs atomic.Int64
				s, err := New(Options{Path: filepath.Join(b.TempDir(), "audit.jsonl"), Fsync: mode,
					syncFn: func(f *os.File) error { syncs.Add(1); return fsutil.Fdatasync(f) }})
				if err != nil {
					b.Fatal(err)
				}
				defer func() { _ = s.Close() }()
				b.SetParallelism(perCPU)
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := s.WriteBatch(context.Background(), testSession, line); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
				b.ReportMetric(float64(syncs.Load())/float64(b.N), "syncs/batch")
			})
		}
	}
}

// BenchmarkWriteBatchSustained appends 1 MB batches with fsync=batch for
// long enough to leave any burst behind (-benchtime 2000x writes 2 GB).
// "aligned" batches are 1 MiB of lines, so that every write starts and ends
// on a page boundary; real batches are "unaligned". The pair shows what a
// test of the disk with aligned blocks (dd, a 1 MiB buffer) would hide:
// on this project's VM those ran at a third of the unaligned speed.
func BenchmarkWriteBatchSustained(b *testing.B) {
	for _, shape := range []struct {
		name string
		data []byte
	}{
		{"aligned", batchOf(2048, 512)},
		{"unaligned", batchOf(2500, 400)},
	} {
		b.Run(shape.name, func(b *testing.B) {
			s, err := New(Options{Path: filepath.Join(b.TempDir(), "audit.jsonl")})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			ctx := context.Background()
			b.SetBytes(int64(len(shape.data)))
			for b.Loop() {
				if err := s.WriteBatch(ctx, "", shape.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
