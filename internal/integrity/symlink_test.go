package integrity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A symbolic link planted in a sidecar's place stops the start with an
// error that says so and names the sidecar, not with O_NOFOLLOW's
// "too many levels of symbolic links".
func TestStartNamesASymlinkedSidecar(t *testing.T) {
	k, _ := testKeys(t, "test")
	for _, sidecar := range []func(string) string{StorePath, CheckpointsPath, SegmentsPath} {
		path := auditPath(t)
		appendLocked(t, path, lines(1, 3))
		if err := newSealer(t, k).Seal(bg, path); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(SegmentsPath(path), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		p := sidecar(path)
		kept := filepath.Join(t.TempDir(), filepath.Base(p))
		if err := os.Rename(p, kept); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(kept, p); err != nil {
			t.Fatal(err)
		}
		appendLocked(t, path, lines(4, 5))
		err := newSealer(t, k).SealAtStart(bg, path)
		if err == nil {
			t.Fatalf("%s: sealed through a symlinked sidecar", p)
		}
		want := p + " is a symbolic link, and an audit file's sidecars are never followed"
		if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "too many levels") {
			t.Errorf("%s: error %q, want it to contain %q", p, msg, want)
		}
	}
}
