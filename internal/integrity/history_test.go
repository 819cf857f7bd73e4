package integrity

import (
	"bytes"
	"errors"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// editInPlace rewrites the first byte of line 1's number in path without
// replacing the file (same inode), as an attacker with write access can.
func editInPlace(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.WriteAt([]byte("9"), int64(len(`{"n":`))); err != nil {
		t.Fatal(err)
	}
}

// sealedTwice seals lines 1-3 and then 4-6 of a new file with one sealer,
// and returns the sidecar as it was after the first checkpoint.
func sealedTwice(t *testing.T) (k *Keys, path string, s *Sealer, first []byte) {
	t.Helper()
	k, _ = testKeys(t, "test")
	path = auditPath(t)
	s = newSealer(t, k)
	for _, ls := range []string{lines(1, 3), lines(4, 6)} {
		appendLocked(t, path, ls)
		if err := s.Seal(bg, path); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first, _ = os.ReadFile(CheckpointsPath(path))
		}
	}
	return k, path, s, first
}

// A running sealer that knew a checkpoint refuses a sidecar that no longer
// reaches it: removing the checkpoints (and the store) and editing a sealed
// line in place was signed anew within one interval, and verify passed.
func TestSealerRefusesRemovedSignedHistory(t *testing.T) {
	for name, remove := range map[string]func(t *testing.T, path string, firstLen int){
		"both sidecars removed": func(t *testing.T, path string, _ int) {
			for _, p := range []string{StorePath(path), CheckpointsPath(path)} {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
		},
		"the newest checkpoint removed": func(t *testing.T, path string, firstLen int) {
			if err := os.Truncate(CheckpointsPath(path), int64(firstLen)); err != nil {
				t.Fatal(err)
			}
		},
		"the newest checkpoint cut short": func(t *testing.T, path string, firstLen int) {
			if err := os.Truncate(CheckpointsPath(path), int64(firstLen)+20); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, path, s, first := sealedTwice(t)
			remove(t, path, len(first))
			editInPlace(t, path)
			removed, _ := os.ReadFile(CheckpointsPath(path))
			err := s.Seal(bg, path)
			if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "signed history was removed") {
				t.Fatalf("Seal = %v", err)
			}
			if after, _ := os.ReadFile(CheckpointsPath(path)); !bytes.Equal(after, removed) {
				t.Fatalf("checkpoints changed from %d to %d bytes: left for inspection, never repaired or signed over", len(removed), len(after))
			}
		})
	}
}

// A running sealer that finds the file tampered with leaves a torn tail
// as it is: the file is kept for inspection, not written to first.
func TestRunningSealerRefusesATornFileWithoutWritingToIt(t *testing.T) {
	_, path, s, first := sealedTwice(t)
	if err := os.Truncate(CheckpointsPath(path), int64(len(first))); err != nil {
		t.Fatal(err)
	}
	appendLocked(t, path, `{"n":99,"tor`)
	before, _ := os.ReadFile(path)
	if err := s.Seal(bg, path); !errors.Is(err, ErrTampered) {
		t.Fatalf("Seal = %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatalf("the refused file changed from %q to %q", before[len(before)-8:], after[len(after)-8:])
	}
}

// A record with a line too long for any note, followed by more records,
// is not a torn tail: a fresh sealer refuses the file and leaves the
// sidecar whole (it used to cut it back to that record, every later
// checkpoint with it, and seal over what they covered).
func TestLongLineInsideTheSidecarIsNotATornTail(t *testing.T) {
	k, path, _, first := sealedTwice(t)
	all, _ := os.ReadFile(CheckpointsPath(path))
	// A long line inside the second record.
	bad := append(append(append([]byte{}, first...), strings.Repeat("x", 5000)+"\n"...), all[len(first):]...)
	if err := os.WriteFile(CheckpointsPath(path), bad, 0o600); err != nil {
		t.Fatal(err)
	}
	nr := NewNoteReader(bytes.NewReader(bad))
	if _, err := nr.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := nr.Next(); err == nil || errors.Is(err, ErrTornRecord) {
		t.Fatalf("second record: %v, want a format error, not a torn tail", err)
	}
	if err := newSealer(t, k).Seal(bg, path); !errors.Is(err, ErrTampered) {
		t.Fatalf("Seal = %v", err)
	}
	if after, _ := os.ReadFile(CheckpointsPath(path)); !bytes.Equal(after, bad) {
		t.Fatalf("the sidecar went from %d to %d bytes", len(bad), len(after))
	}
}

// prove reads the line it proves up to what a bundle carries: a longer
// line, which verify-proof would refuse, is refused before it is read
// whole (a 1 GiB line took 2.1 GB).
func TestProveRefusesALineNoBundleCarries(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 1)+`{"pad":"`+strings.Repeat("x", MaxProvenLine)+"\"}\n")
	if err := newSealer(t, k).Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	if _, err := Prove(path, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := Prove(path, 2); err == nil || !strings.Contains(err.Error(), "more than a proof bundle carries") {
		t.Fatalf("Prove = %v", err)
	}
}

// A sealed line cut short, then a restart: the file is refused as it is,
// not first "repaired" with a newline (which changed the evidence kept for
// inspection).
func TestRestartRefusesACutLineWithoutWritingToIt(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 5))
	if err := newSealer(t, k).Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()-4); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if err := newSealer(t, k).Seal(bg, path); !errors.Is(err, ErrTampered) {
		t.Fatalf("Seal = %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatalf("the refused file changed from %q to %q", before[len(before)-8:], after[len(after)-8:])
	}
}

// A checkpoint append the disk cuts short (here the file size limit) is
// cut back out, so the next seal of the same process does not take its own
// torn record for tampering and goes on sealing.
func TestOwnFailedCheckpointAppendIsNotTampering(t *testing.T) {
	signal.Ignore(syscall.SIGXFSZ) // EFBIG instead of the signal
	defer signal.Reset(syscall.SIGXFSZ)
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	s := newSealer(t, k)
	for i := 1; i <= 40; i++ { // a sidecar larger than the store and the file
		appendLocked(t, path, lines(i, i))
		if err := s.Seal(bg, path); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(CheckpointsPath(path))
	if err != nil {
		t.Fatal(err)
	}
	appendLocked(t, path, lines(41, 41))
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: uint64(fi.Size() + 50), Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	err = s.Seal(bg, path)
	if rerr := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatal("the checkpoint append did not fail; the test proves nothing")
	}
	if after, _ := os.Stat(CheckpointsPath(path)); after.Size() != fi.Size() {
		t.Fatalf("the failed record was left: %d bytes, was %d", after.Size(), fi.Size())
	}
	if err := s.Seal(bg, path); err != nil {
		t.Fatalf("next seal: %v", err)
	}
	if res := check(t, path, pub); res.Failure != nil || res.Sealed != 41 {
		t.Fatalf("check = %+v failure %v", res, res.Failure)
	}
}
