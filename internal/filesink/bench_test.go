package filesink

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
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
