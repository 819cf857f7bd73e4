package integrity

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// within fails the test if f has not returned in 10 s: an open of a FIFO
// waits for a writer for ever.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s blocked on a FIFO", what)
		return nil
	}
}

// A FIFO in the place of a sidecar or of the verifier key is refused at
// once by verify, prove and verify-proof's key loading; it hung them, past
// SIGINT.
func TestFIFOsAreRefusedNotWaitedFor(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 3))
	if err := newSealer(t, k).Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	v, err := LoadVerifierKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	fifoAt := func(p string) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fifoAt(CheckpointsPath(path))
	if err := within(t, "NewChecker", func() error { _, err := NewChecker(path, v); return err }); !errors.Is(err, fsutil.ErrNotRegular) {
		t.Fatalf("NewChecker = %v", err)
	}
	if err := within(t, "Prove", func() error { _, err := Prove(path, 1); return err }); !errors.Is(err, fsutil.ErrNotRegular) {
		t.Fatalf("Prove = %v", err)
	}
	keyFIFO := pub + ".fifo"
	fifoAt(keyFIFO)
	if err := within(t, "LoadVerifierKey", func() error { _, err := LoadVerifierKey(keyFIFO); return err }); !errors.Is(err, fsutil.ErrNotRegular) {
		t.Fatalf("LoadVerifierKey = %v", err)
	}
}
