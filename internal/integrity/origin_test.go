package integrity

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOriginOfNamesTheFileBelowItsBase(t *testing.T) {
	for _, c := range []struct{ path, base, want string }{
		{"/a/audit/events.jsonl", "/a/audit", "k/events.jsonl"},
		{"/a/audit/6f1c.jsonl", "/a/audit", "k/6f1c.jsonl"},
		{"/a/audit/6f1c/events.jsonl", "/a/audit", "k/6f1c/events.jsonl"},
		{"/a/audit/6f1c/events.jsonl", "", "k/events.jsonl"},
		{"/b/events.jsonl", "/a/audit", "k/events.jsonl"}, // not below base
	} {
		if got := originOf("k", c.path, c.base); got != c.want {
			t.Errorf("originOf(%q, %q) = %q, want %q", c.path, c.base, got, c.want)
		}
	}
}

// sealSessionDirs seals base/A/events.jsonl and base/B/events.jsonl the
// way a {session_id}/events.jsonl template lays them out.
func sealSessionDirs(t *testing.T, k *Keys) (base string, s *Sealer) {
	t.Helper()
	base = t.TempDir()
	s, err := NewSealer(Settings{Keys: k, Interval: 1e9, OriginBase: base})
	if err != nil {
		t.Fatal(err)
	}
	for i, dir := range []string{"A", "B"} {
		path := filepath.Join(base, dir, "events.jsonl")
		if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		appendLocked(t, path, lines(10*i+1, 10*i+4))
		if err := s.Seal(bg, path); err != nil {
			t.Fatal(err)
		}
	}
	return base, s
}

// Below a templated directory every file has the same name, so the origin
// holds the directories too: two sessions' directories swapped, each with
// its sidecars, no longer pass for each other, while a rotated copy in its
// own directory still does.
func TestSwappedSessionDirectoriesDoNotNameEachOther(t *testing.T) {
	k, pub := testKeys(t, "test")
	base, _ := sealSessionDirs(t, k)
	a := filepath.Join(base, "A", "events.jsonl")
	if res := check(t, a, pub); res.Failure != nil || res.Origin != "test/A/events.jsonl" || !res.OriginNames(a) {
		t.Fatalf("before the swap: %+v", res)
	}
	rotated := a + ".1"
	for _, suffix := range []string{"", StoreSuffix, CheckpointsSuffix} {
		b, _ := os.ReadFile(a + suffix)
		if err := os.WriteFile(rotated+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if res := check(t, rotated, pub); !res.OriginNames(rotated) {
		t.Fatalf("a rotated copy in its own directory must still be named: origin %q", res.Origin)
	}

	swap(t, filepath.Join(base, "A"), filepath.Join(base, "B"))
	res := check(t, a, pub)
	if res.Failure != nil {
		t.Fatalf("the lines still match their own checkpoints: %v", res.Failure)
	}
	if res.OriginNames(a) {
		t.Fatalf("origin %q passes for %s", res.Origin, a)
	}
}

// A running sealer (and a restarted one) refuses a file whose checkpoints
// name another file, instead of signing that file's history as this one's.
func TestSealerRefusesAFileSealedAsAnother(t *testing.T) {
	k, _ := testKeys(t, "test")
	base, s := sealSessionDirs(t, k)
	swap(t, filepath.Join(base, "A"), filepath.Join(base, "B"))
	a := filepath.Join(base, "A", "events.jsonl")
	appendLocked(t, a, lines(5, 5))
	for name, sealer := range map[string]*Sealer{"running": s, "restarted": nil} {
		if sealer == nil {
			var err error
			// It stands for a process started after the running one
			// crashed: the crashed one's owner locks are gone.
			if sealer, err = NewSealer(Settings{Keys: k, Interval: 1e9, OriginBase: base, CallerOwns: true}); err != nil {
				t.Fatal(err)
			}
		}
		err := sealer.Seal(bg, a)
		if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), `its checkpoints name another file (origin "test/B/events.jsonl", this file's is "test/A/events.jsonl")`) {
			t.Fatalf("%s sealer: Seal = %v", name, err)
		}
	}
}

// Files sealed before origins held directories (by file name alone) are
// still sealed on.
func TestSealerAcceptsAnOriginByFileName(t *testing.T) {
	k, pub := testKeys(t, "test")
	base := t.TempDir()
	path := filepath.Join(base, "A", "events.jsonl")
	if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	appendLocked(t, path, lines(1, 2))
	if err := newSealer(t, k).Seal(bg, path); err != nil { // no OriginBase: "test/events.jsonl"
		t.Fatal(err)
	}
	appendLocked(t, path, lines(3, 4))
	s, err := NewSealer(Settings{Keys: k, Interval: 1e9, OriginBase: base})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	if res := check(t, path, pub); res.Failure != nil || res.Sealed != 4 || res.Origin != "test/events.jsonl" {
		t.Fatalf("%+v", res)
	}
}

// swap exchanges two directories' names.
func swap(t *testing.T, a, b string) {
	t.Helper()
	tmp := a + ".swap"
	for _, mv := range [][2]string{{a, tmp}, {b, a}, {tmp, b}} {
		if err := os.Rename(mv[0], mv[1]); err != nil {
			t.Fatal(err)
		}
	}
}

// A copy rotated with its sidecars (events.jsonl.1 beside events.jsonl)
// is sealed on at the next start, as the exporter seals every file with a
// store below the template's base: its checkpoints name the file it was
// rotated from, which verify accepts too.
func TestSealerAcceptsARotatedCopy(t *testing.T) {
	k, pub := testKeys(t, "test")
	base, _ := sealSessionDirs(t, k)
	a := filepath.Join(base, "A", "events.jsonl")
	rotated := a + ".1"
	for _, suffix := range []string{"", StoreSuffix, CheckpointsSuffix} {
		if err := os.Rename(a+suffix, rotated+suffix); err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewSealer(Settings{Keys: k, Interval: 1e9, OriginBase: base})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(bg, rotated); err != nil {
		t.Fatalf("rotated copy refused: %v", err)
	}
	if res := check(t, rotated, pub); res.Failure != nil || !res.OriginNames(rotated) {
		t.Fatalf("%+v", res)
	}
}
