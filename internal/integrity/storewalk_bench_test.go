package integrity

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// writeNumbered writes n short audit lines to a new file at path.
func writeNumbered(t testing.TB, path string, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		_, _ = fmt.Fprintf(w, `{"op":"exec","seq":%d,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"}`+"\n", i)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSealRotated is the sealer's cost per rotation in a long-lived
// log: one op writes a 100-line batch that rotates the file before it,
// then seals the closed segment and the new file, into a log whose store
// already holds the given number of lines. It should not grow with them.
func BenchmarkSealRotated(b *testing.B) {
	for _, held := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) {
			k, _ := testKeys(b, "bench")
			path := auditPath(b)
			writeNumbered(b, path, held)
			sealer := newSealer(b, k)
			if err := sealer.Seal(bg, path); err != nil {
				b.Fatal(err)
			}
			batch := []byte(lines(0, 99))
			sink := sealedSink(b, path, &filesink.Rotation{MaxBytes: int64(len(batch))}, sealer)
			b.Cleanup(func() { _ = sink.Close() })
			// The first rotation closes the file of held lines, whose
			// check reads them all: outside the ops measured.
			if err := sink.WriteBatch(bg, "s", batch); err != nil {
				b.Fatal(err)
			}
			if err := sealer.SealPending(bg); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := sink.WriteBatch(bg, "s", batch); err != nil {
					b.Fatal(err)
				}
				if err := sealer.SealPending(bg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
