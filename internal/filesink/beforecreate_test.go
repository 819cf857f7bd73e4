package filesink

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// createCalls records BeforeCreate's calls, and whether the file was
// there at each; fail, when set, is the hook's error.
type createCalls struct {
	paths []string
	fail  error
}

func (c *createCalls) hook(_ context.Context, path string) error {
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		return errors.New("called for a file that is there")
	}
	c.paths = append(c.paths, path)
	return c.fail
}

// BeforeCreate runs once, before a new file is made, and not for a file
// that is there (another session's file from before, or one evicted and
// opened again), nor for the file a rotation makes at the path.
func TestBeforeCreateRunsForANewFileOnly(t *testing.T) {
	dir := t.TempDir()
	const newSID, oldSID = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b", "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	oldPath := filepath.Join(dir, oldSID+".jsonl")
	if err := os.WriteFile(oldPath, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var calls createCalls
	s, err := New(Options{
		Path: filepath.Join(dir, "{session_id}.jsonl"), MaxOpenFiles: 1,
		BeforeCreate: calls.hook, Rotation: &Rotation{MaxBytes: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	// Each session's file is evicted by the other's write (one slot), and
	// each write beyond the first rotates its file (MaxBytes 4).
	for range 3 {
		for _, sid := range []string{oldSID, newSID} {
			if err := s.WriteBatch(context.Background(), sid, []byte("{}\n")); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := filepath.Join(dir, newSID+".jsonl")
	if len(calls.paths) != 1 || calls.paths[0] != want {
		t.Fatalf("BeforeCreate calls %v, want [%s]", calls.paths, want)
	}
	if segs, err := Segments(want); err != nil || len(segs) != 2 {
		t.Fatalf("segments of the new file: %v, %v; want 2 rotations", segs, err)
	}
}

// A BeforeCreate that fails fails the write, and the file is not made;
// the next write asks again.
func TestBeforeCreateFailureFailsTheWrite(t *testing.T) {
	dir := t.TempDir()
	calls := createCalls{fail: errors.New("no signed history")}
	s, err := New(Options{Path: filepath.Join(dir, "{session_id}", "events.jsonl"), BeforeCreate: calls.hook})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	const sid = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	path := filepath.Join(dir, sid, "events.jsonl")
	for range 2 {
		err := s.WriteBatch(context.Background(), sid, []byte("{}\n"))
		if !errors.Is(err, calls.fail) {
			t.Fatalf("write error %v, want the hook's", err)
		}
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the file was made: %v", err)
		}
	}
	if len(calls.paths) != 2 {
		t.Fatalf("BeforeCreate calls %v, want one per write", calls.paths)
	}
	calls.fail = nil
	if err := s.WriteBatch(context.Background(), sid, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
}

// A symlink planted for a session's directory is refused before
// BeforeCreate runs: the hook (the sealer, which writes sidecars beside
// the file) never writes through it.
func TestBeforeCreateNotThroughASymlinkedDirectory(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	const sid = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	if err := os.Symlink(elsewhere, filepath.Join(dir, sid)); err != nil {
		t.Fatal(err)
	}
	var calls createCalls
	s, err := New(Options{Path: filepath.Join(dir, "{session_id}", "events.jsonl"), BeforeCreate: calls.hook})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if err := s.WriteBatch(context.Background(), sid, []byte("{}\n")); !errors.Is(err, ErrSymlink) {
		t.Fatalf("write error %v, want ErrSymlink", err)
	}
	if len(calls.paths) != 0 {
		t.Fatalf("BeforeCreate calls %v, want none", calls.paths)
	}
}
