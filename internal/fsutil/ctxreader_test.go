package fsutil

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestContextReaderStopsWhenDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := ContextReader(ctx, strings.NewReader("abcdef"))
	buf := make([]byte, 3)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "abc" {
		t.Fatalf("Read before cancel = %q, %v; want abc, nil", buf[:n], err)
	}
	cancel()
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Read after cancel = %d, %v; want 0, context.Canceled", n, err)
	}
	if _, err := io.Copy(io.Discard, r); !errors.Is(err, context.Canceled) {
		t.Fatalf("Copy after cancel = %v; want context.Canceled", err)
	}
}
