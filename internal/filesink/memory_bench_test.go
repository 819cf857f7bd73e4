package filesink

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/heaptest"
)

// BenchmarkMemoryFiles shows the sink's memory flat in the number of files:
// one batch of ten ≈400-byte lines to each of 10 to 10,000 sessions of a
// templated path, every one a new file, through the default cache of
// DefaultMaxOpenFiles descriptors. Run with -benchtime 1x: one op is the
// whole run. fsync=never keeps 10,000 files quick; syncing does not change
// what the sink holds. peak-open-files is the sink's own count of
// descriptors open at once.
func BenchmarkMemoryFiles(b *testing.B) {
	data := batchOf(10, 400)
	for _, files := range []int{10, 100, 1000, 10_000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			sessions := make([]string, files)
			for i := range sessions {
				sessions[i] = uuid.NewString()
			}
			ctx := context.Background()
			m := heaptest.Start()
			s, err := New(Options{Path: filepath.Join(b.TempDir(), "audit", "{session_id}.jsonl"), Fsync: FsyncNever})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				for _, id := range sessions {
					if err := s.WriteBatch(ctx, id, data); err != nil {
						b.Fatal(err)
					}
				}
			}
			m.Report(b)
			b.ReportMetric(float64(s.peak.Load()), "peak-open-files")
			runtime.KeepAlive(sessions) // made before the baseline: not to be counted as freed
			runtime.KeepAlive(s)
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
