package integrity

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// benchLines is ~1 MiB of audit-sized lines (~330 bytes each).
func benchLines() []byte {
	var b []byte
	for i := 0; len(b) < 1<<20; i++ {
		b = fmt.Appendf(b, `{"data":{"cwd":"/workspace","command":["python","-c","print(%d)"]},"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-%012x","op":"exec","parent_span_id":null,"phase":"start","seq":%d,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","trace_id":null,"ts":"2026-03-14T15:09:26.535897Z","version":1}`+"\n", i, i, i)
	}
	return b
}

// BenchmarkLeafHasher is the RFC 6962 leaf hashing alone: MB/s is the
// "about 1 ms per MB with SHA-NI" figure.
func BenchmarkLeafHasher(b *testing.B) {
	data := benchLines()
	lh := NewLeafHasher(func(tlog.Hash) error { return nil })
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		_, _ = lh.Write(data)
	}
}

// BenchmarkSeal is a seal of 1 MiB of new lines: read back, leaf and node
// hashes, store append, signed checkpoint.
func BenchmarkSeal(b *testing.B) {
	k, _ := testKeys(b, "bench")
	path := auditPath(b)
	data := benchLines()
	s := newSealer(b, k)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		b.StopTimer()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = f.Write(data)
		_ = f.Close()
		b.StartTimer()
		if err := s.Seal(bg, path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartCheck1M is a sealer's first seal of a sealed
// 1,000,000-line file (the collector's start: the file and its store read
// whole), against verify's read of the same store (CheckStore).
func BenchmarkStartCheck1M(b *testing.B) {
	k, _ := testKeys(b, "bench")
	path := auditPath(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range 1_000_000 {
		_, _ = fmt.Fprintf(w, `{"op":"exec","seq":%d,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"}`+"\n", i)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		b.Fatal(err)
	}
	if err := newSealer(b, k).Seal(bg, path); err != nil {
		b.Fatal(err)
	}
	b.Run("seal-at-start", func(b *testing.B) {
		for b.Loop() {
			if err := newSealer(b, k).Seal(bg, path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("verify-store", func(b *testing.B) {
		_, cp, err := NewestSigned(path, k.Verifier)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := CheckStore(path, cp); err != nil {
				b.Fatal(err)
			}
		}
	})
}
