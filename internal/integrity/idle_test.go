package integrity

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// sessionFile is the i-th file of dir, as a templated path with one file
// per session names them.
func sessionFile(dir string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("s%06d.jsonl", i))
}

// sealRounds writes three lines to each of files new session files of dir,
// perRound files between seals. After each round it checks how many files
// the sealer remembers.
func sealRounds(tb testing.TB, s *Sealer, dir string, files, perRound int) {
	tb.Helper()
	for done := 0; done < files; {
		for range min(perRound, files-done) {
			p := sessionFile(dir, done)
			appendLocked(tb, p, lines(1, 3))
			s.Wrote(p, 3)
			done++
		}
		if err := s.SealPending(bg); err != nil {
			tb.Fatal(err)
		}
		if got, want := len(s.logs), min(done, maxIdleLogs); got != want {
			tb.Fatalf("after sealing %d files the sealer remembers %d, want %d", done, got, want)
		}
	}
}

// forgotten returns n of the first files session files of dir that the
// sealer no longer remembers.
func forgotten(t *testing.T, s *Sealer, dir string, files, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < files && len(out) < n; i++ {
		if p := sessionFile(dir, i); s.logs[p] == nil {
			out = append(out, p)
		}
	}
	if len(out) < n {
		t.Fatalf("only %d files forgotten, want %d", len(out), n)
	}
	return out
}

// TestSealerForgetsIdleFilesNotTheirHistory: the sealer's memory is bounded
// in the number of files (maxIdleLogs idle ones), and forgetting a file
// loses nothing: sealed again, it is checked whole against its store, so
// lines appended meanwhile are sealed and a line changed meanwhile is found.
// A forgotten file's owner lock is let go with it.
func TestSealerForgetsIdleFilesNotTheirHistory(t *testing.T) {
	k, pub := testKeys(t, "test")
	s, _ := lockingSealer(t, k)
	const perRound = 100
	const files = maxIdleLogs + 2*perRound
	dir := t.TempDir()
	sealRounds(t, s, dir, files, perRound)
	f := forgotten(t, s, dir, files, 2)
	grown, tampered := f[0], f[1]
	o, err := LockLog(grown)
	if err != nil {
		t.Fatalf("LockLog of a forgotten file = %v", err)
	}
	o.Release()
	if _, err := LockLog(sessionFile(dir, files-1)); !errors.Is(err, ErrLogOwned) {
		t.Fatalf("LockLog of a remembered file = %v, want ErrLogOwned", err)
	}

	appendLocked(t, grown, lines(4, 5))
	s.Wrote(grown, 2)
	if err := s.SealPending(bg); err != nil {
		t.Fatal(err)
	}
	if res := check(t, grown, pub); res.Failure != nil || res.Checkpoints != 2 || res.Sealed != 5 || res.Lines != 5 {
		t.Fatalf("check of a file sealed again after being forgotten = %+v (failure %v)", res, res.Failure)
	}

	rewrite(t, tampered, `{"n":2}`, `{"n":7}`)
	s.Wrote(tampered, 0)
	err = s.SealPending(bg)
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "line 2 differs") {
		t.Fatalf("SealPending after a forgotten file was changed = %v, want tampering at line 2", err)
	}
	if err := s.Close(bg); err != nil {
		t.Fatal(err)
	}
	if o, err = LockLog(sessionFile(dir, files-1)); err != nil {
		t.Fatalf("LockLog after Close = %v", err)
	}
	o.Release()
}
