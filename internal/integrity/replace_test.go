package integrity

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// replaceByRename writes path's content with line 1 edited to a new file
// and renames it over path (a new inode), as sed -i and editors do.
func replaceByRename(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(`{"n":`)] = '9'
	if err := os.WriteFile(path+".new", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

func rotate(t *testing.T, path string, suffixes ...string) {
	t.Helper()
	for _, suffix := range suffixes {
		if err := os.Rename(path+suffix, path+".1"+suffix); err != nil {
			t.Fatal(err)
		}
	}
}

// A rename over the file forgot the newest checkpoint the sealer knew: with
// the newest checkpoints cut from the sidecar and the store removed, the
// edited file was signed anew, silently.
func TestReplacedFileMustStillReachTheNewestCheckpoint(t *testing.T) {
	_, path, s, first := sealedTwice(t)
	replaceByRename(t, path)
	if err := os.Truncate(CheckpointsPath(path), int64(len(first))); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(StorePath(path)); err != nil {
		t.Fatal(err)
	}
	err := s.Seal(bg, path)
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "signed history was removed") {
		t.Fatalf("Seal = %v", err)
	}
	if after, _ := os.ReadFile(CheckpointsPath(path)); len(after) != len(first) {
		t.Fatalf("checkpoints grew from %d to %d bytes: the edited file was signed", len(first), len(after))
	}
}

// A seal between a rotation's moves (the file first, then its sidecars)
// is refused, but once the sidecars are gone too the new file is sealed
// as a new tree, with a warning: it used to stay refused until a restart.
// So it is when a writer had already made the new file before that seal.
func TestRotationCaughtHalfDoneRecovers(t *testing.T) {
	for _, written := range []bool{false, true} {
		t.Run(fmt.Sprintf("new file written first=%v", written), func(t *testing.T) { rotationCaughtHalfDone(t, written) })
	}
}

func rotationCaughtHalfDone(t *testing.T, written bool) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 4))
	s, logs := observedSealer(t, k, zap.WarnLevel)
	if err := s.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	rotate(t, path, "")
	if written {
		appendLocked(t, path, lines(5, 6))
	}
	if err := s.Seal(bg, path); !errors.Is(err, ErrTampered) {
		t.Fatalf("Seal mid-rotation = %v", err)
	}
	rotate(t, path, StoreSuffix, CheckpointsSuffix)
	if !written {
		appendLocked(t, path, lines(5, 6))
	}
	if err := s.Seal(bg, path); err != nil {
		t.Fatalf("Seal after the rotation = %v", err)
	}
	if res := check(t, path, pub); res.Failure != nil || res.Sealed != 2 {
		t.Fatalf("check = %+v failure %v", res, res.Failure)
	}
	if n := len(logs.FilterMessageSnippet("sealing starts a new tree").All()); n != 1 {
		t.Fatalf("%d new-tree warnings, want 1: %v", n, logs.All())
	}
}

// The same file, refused and then stripped of its sidecars, stays
// refused: only a file that is gone or another one starts a new tree.
func TestTamperedFileStaysRefusedWithoutItsSidecars(t *testing.T) {
	_, path, s, first := sealedTwice(t)
	editInPlace(t, path)
	if err := os.Truncate(CheckpointsPath(path), int64(len(first))); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(bg, path); !errors.Is(err, ErrTampered) {
		t.Fatalf("Seal = %v", err)
	}
	for _, p := range []string{StorePath(path), CheckpointsPath(path)} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Seal(bg, path); !errors.Is(err, ErrTampered) {
		t.Fatalf("Seal without sidecars = %v", err)
	}
}
