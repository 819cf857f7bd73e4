package spool

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReplayDamaged damages a running spool: the file is cut to at and
// damage is written there, in place, then more lines are appended and
// replayed. Replay must not panic or fail, must send only canonical
// lines, and must send every line appended after the damage, whole.
func FuzzReplayDamaged(f *testing.F) {
	lines := eventLines(f, 1, 3)
	f.Add([]byte("<13 bytes in>"), uint16(40))
	f.Add([]byte("\x00\x00\x00\x00"), uint16(0))
	f.Add([]byte("\xff\xff\n\xff"), uint16(200))
	f.Add([]byte("secret=hunter2\n"), uint16(len(lines)-100))
	f.Add([]byte{}, uint16(len(lines)-100))
	f.Add(lines[:50], uint16(len(lines)))
	f.Add(bytes.Repeat([]byte("x"), 5000), uint16(10)) // longer than the line bound
	f.Fuzz(func(t *testing.T, damage []byte, at uint16) {
		path := filepath.Join(t.TempDir(), "spool.jsonl")
		s, err := Open(context.Background(), Options{Path: path, Check: CanonicalEvent, MaxLineBytes: 4096})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = s.Close() }()
		s.syncFn = func(*os.File) error { return nil } // durability is not what is fuzzed
		ctx := context.Background()
		if err := s.Append(ctx, lines); err != nil {
			t.Fatal(err)
		}
		harm(t, path, int64(min(int(at), len(lines))), damage)
		after := eventLines(t, 4, 5)
		if err := s.Append(ctx, after); err != nil {
			t.Fatal(err)
		}
		var sent bytes.Buffer
		_, err = s.Replay(ctx, 2, 1024, func(_ context.Context, batch []byte, _ int) error {
			for _, l := range bytes.SplitAfter(batch, []byte{'\n'}) {
				if len(l) > 0 && CanonicalEvent(l) != nil {
					t.Fatalf("sent a line that is not a canonical event: %q", l)
				}
			}
			sent.Write(batch)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(sent.Bytes(), after) {
			t.Fatalf("the lines appended after the damage were not sent whole: %q", sent.Bytes())
		}
		if s.Size() != 0 {
			t.Fatalf("%d bytes still pending after a round that sent everything", s.Size())
		}
	})
}

// harm cuts the file at off and writes damage there, in place.
func harm(t *testing.T, path string, off int64, damage []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if err := f.Truncate(off); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(damage, off); err != nil {
		t.Fatal(err)
	}
}
