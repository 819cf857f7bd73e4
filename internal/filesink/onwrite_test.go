package filesink

import (
	"context"
	"path/filepath"
	"testing"
)

func TestOnWriteReportsPathAndLines(t *testing.T) {
	dir := t.TempDir()
	type call struct {
		path  string
		lines int
	}
	var calls []call
	s, err := New(Options{
		Path:    filepath.Join(dir, "{session_id}.jsonl"),
		OnWrite: func(p string, n int) { calls = append(calls, call{p, n}) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	sid := "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	if err := s.WriteBatch(context.Background(), sid, []byte("{}\n{}\n{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteBatch(context.Background(), sid, []byte("no newline")); err == nil {
		t.Fatal("accepted a batch without a newline")
	}
	want := call{filepath.Join(dir, sid+".jsonl"), 3}
	if len(calls) != 1 || calls[0] != want {
		t.Fatalf("OnWrite calls %v, want [%v] (failed writes are not reported)", calls, want)
	}
}
