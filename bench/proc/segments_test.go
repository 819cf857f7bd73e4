package proc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A trail of the active file, one plain and one compressed segment is
// counted line for line through the decompression, and the wait ends only
// once the plain segment is compressed.
func TestTrailStatsAndWaitCompressed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	write := func(name string, lines int) {
		t.Helper()
		if err := os.WriteFile(name, []byte(strings.Repeat("{\"n\":1}\n", lines)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(path, 3)
	seg1 := filepath.Join(dir, "audit-20261207T150000Z-000001.jsonl")
	seg2 := filepath.Join(dir, "audit-20261207T150001Z-000002.jsonl")
	write(seg1, 5)
	write(seg2, 7)
	ctx := context.Background()
	if err := filesink.CompressFile(ctx, seg1, seg1+filesink.ZstdSuffix); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(seg1); err != nil {
		t.Fatal(err)
	}
	_, lines, err := TrailStats(path)
	if err != nil || lines != 15 {
		t.Fatalf("TrailStats: %d lines, %v; want 15", lines, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := WaitCompressed(short, path); err == nil {
		t.Fatal("WaitCompressed returned with a plain segment left")
	}
	if err := filesink.CompressFile(ctx, seg2, seg2+filesink.ZstdSuffix); err != nil {
		t.Fatal(err)
	}
	twin, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	if _, err := WaitCompressed(twin, path); err == nil {
		t.Fatal("WaitCompressed returned with the plain twin still there")
	}
	if err := os.Remove(seg2); err != nil {
		t.Fatal(err)
	}
	done, cancel3 := context.WithTimeout(ctx, time.Minute)
	defer cancel3()
	if _, err := WaitCompressed(done, path); err != nil {
		t.Fatal(err)
	}
	if _, lines, _ = TrailStats(path); lines != 15 {
		t.Fatalf("after compression %d lines, want 15", lines)
	}
}
