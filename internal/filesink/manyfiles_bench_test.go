package filesink

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
)

// BenchmarkRotationManyFiles is a {session_id} path's rotation cost: 3,000
// sessions' files side by side in one directory, each batch (ten lines)
// going to the next session in turn and, with rotation on, rotating its
// file first (two segments kept per file, so the directory holds about
// 12,000 names). Each file is written twice before the timer starts, so
// every file has rotated once. batches/s with rotation on over off is
// what rotating each batch costs there.
func BenchmarkRotationManyFiles(b *testing.B) {
	const files = 3000
	data := batchOf(10, 400)
	for _, tc := range []struct {
		name string
		rot  *Rotation
	}{
		{"rotation=off", nil},
		{"rotation=on", &Rotation{MaxBytes: 1, MaxBackups: 2}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			sessions := make([]string, files)
			for i := range sessions {
				sessions[i] = uuid.NewString()
			}
			s, err := New(Options{Path: filepath.Join(b.TempDir(), "{session_id}.jsonl"), Fsync: FsyncNever,
				MaxOpenFiles: files, Rotation: tc.rot})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			write := func(i int) {
				if err := s.WriteBatch(ctx, sessions[i%files], data); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 2 * files {
				write(i)
			}
			i := 0
			for b.Loop() {
				write(i)
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "batches/s")
			b.StopTimer()
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
