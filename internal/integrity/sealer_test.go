package integrity

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

func TestSealTwoWritersThenCheck(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 5))
	s := newSealer(t, k)
	if err := s.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	// A second writer (the Python sink) appends; its lines are leaves too.
	appendLocked(t, path, lines(6, 9))
	s.Wrote(path, 0)
	if err := s.SealPending(bg); err != nil {
		t.Fatal(err)
	}
	res := check(t, path, pub)
	if res.Failure != nil || res.Checkpoints != 2 || res.Sealed != 9 || res.Lines != 9 {
		t.Fatalf("check = %+v (failure %v)", res, res.Failure)
	}
	for _, p := range []string{StorePath(path), CheckpointsPath(path)} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %04o, want 0600", p, fi.Mode().Perm())
		}
	}
}

func TestSealNothingNewWritesNoCheckpoint(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 3))
	s := newSealer(t, k)
	for range 3 {
		if err := s.Seal(bg, path); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(CheckpointsPath(path))
	if n := strings.Count(string(data), "\n—"); n != 1 {
		t.Fatalf("%d checkpoints, want 1:\n%s", n, data)
	}
}

func TestRestartSealsLinesSinceLastCheckpoint(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 4))
	if err := newSealer(t, k).Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	// Written, then a crash before the next checkpoint; a torn line last.
	torn := lines(5, 7) + `{"n":8,"tor`
	appendLocked(t, path, torn)
	restarted := newSealer(t, k)
	if err := restarted.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	// The whole lines are sealed at once, and the torn tail, once the file
	// has passed the checks, is cut off and kept aside: it was never
	// acknowledged, and the file holds only whole lines.
	if res := check(t, path, pub); res.Failure != nil || res.Sealed != 7 || res.Lines != 7 {
		t.Fatalf("check = %+v failure %v", res, res.Failure)
	}
	data, _ := os.ReadFile(path)
	if want := lines(1, 7); string(data) != want {
		t.Fatalf("file = %q, want %q", data, want)
	}
	kept, _ := filepath.Glob(path + fsutil.TornSuffix + "*")
	if len(kept) != 1 {
		t.Fatalf("torn line kept in %v", kept)
	}
	if b, _ := os.ReadFile(kept[0]); string(b) != `{"n":8,"tor` {
		t.Fatalf("kept %q", b)
	}
	// The next seal has nothing new to seal, and the trail verifies.
	if err := restarted.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	if res := check(t, path, pub); res.Failure != nil || res.Sealed != 7 {
		t.Fatalf("check = %+v failure %v", res, res.Failure)
	}
}

func TestStoreRebuiltWhenMissingOrBehind(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, store string)
	}{
		{"missing", func(t *testing.T, store string) { _ = os.Remove(store) }},
		{"behind", func(t *testing.T, store string) {
			if err := os.Truncate(store, tlog.StoredHashCount(3)*tlog.HashSize); err != nil {
				t.Fatal(err)
			}
		}},
		{"torn", func(t *testing.T, store string) {
			fi, _ := os.Stat(store)
			if err := os.Truncate(store, fi.Size()-7); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, pub := testKeys(t, "test")
			path := auditPath(t)
			appendLocked(t, path, lines(1, 10))
			if err := newSealer(t, k).Seal(bg, path); err != nil {
				t.Fatal(err)
			}
			tc.break_(t, StorePath(path))
			appendLocked(t, path, lines(11, 12))
			if err := newSealer(t, k).Seal(bg, path); err != nil {
				t.Fatal(err)
			}
			if res := check(t, path, pub); res.Failure != nil || res.Sealed != 12 || res.Checkpoints != 2 {
				t.Fatalf("check = %+v failure %v", res, res.Failure)
			}
		})
	}
}

func TestSealRefusesWhatDisagrees(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, path string)
		want   string
	}{
		{"line changed, store kept", func(t *testing.T, path string) {
			rewrite(t, path, `{"n":3}`, `{"n":4}`)
		}, "line 3 differs"},
		{"line changed, store removed", func(t *testing.T, path string) {
			rewrite(t, path, `{"n":3}`, `{"n":4}`)
			_ = os.Remove(StorePath(path))
		}, "do not match the newest checkpoint"},
		{"file cut back", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(lines(1, 4)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "the file has 4 lines but 6 were sealed"},
		{"store hash changed", func(t *testing.T, path string) {
			f, _ := os.OpenFile(StorePath(path), os.O_WRONLY, 0)
			_, _ = f.WriteAt([]byte{0xff}, 0)
			_ = f.Close()
		}, ".tlog: the line or that store was changed. `sandboxaudit verify --key`"}, // names the store, and how to tell
		{"audit file removed", func(t *testing.T, path string) { _ = os.Remove(path) }, "missing"},
		{"checkpoint from another key", func(t *testing.T, path string) {
			other, _ := testKeys(t, "test")
			forged, _ := SignCheckpoint(Checkpoint{Origin: "test/audit.jsonl", N: 6}, other.Signer)
			f, _ := os.OpenFile(CheckpointsPath(path), os.O_WRONLY|os.O_APPEND, 0)
			_, _ = f.Write(AppendRecord(nil, forged))
			_ = f.Close()
		}, "checkpoint #2: not signed by key test+"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, _ := testKeys(t, "test")
			path := auditPath(t)
			appendLocked(t, path, lines(1, 6))
			if err := newSealer(t, k).Seal(bg, path); err != nil {
				t.Fatal(err)
			}
			tc.tamper(t, path)
			before, _ := os.ReadFile(CheckpointsPath(path))
			s := newSealer(t, k)
			err := s.Seal(bg, path)
			if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Seal = %v, want tampering %q", err, tc.want)
			}
			// Refused: nothing appended, and refused again next time.
			after, _ := os.ReadFile(CheckpointsPath(path))
			if string(after) != string(before) {
				t.Fatal("a checkpoint was written over tampered data")
			}
			if err := s.Seal(bg, path); !errors.Is(err, ErrTampered) {
				t.Fatalf("second Seal = %v", err)
			}
		})
	}
}

// A running sealer trusts its store for the lines it sealed. Someone who
// edits a sealed line and rewrites the store to match, at the same size,
// must not get the next checkpoint signed over the edit: the sealer proves
// the store's tree extends the newest checkpoint before it signs.
func TestRunningSealerRefusesAStoreRewrittenToMatchAnEdit(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 6))
	s := newSealer(t, k)
	if err := s.Seal(bg, path); err != nil {
		t.Fatal(err)
	}

	// The forger's store: built by another sealer over the edited lines.
	rewrite(t, path, `{"n":3}`, `{"n":4}`)
	forged := auditPath(t)
	edited, _ := os.ReadFile(path)
	appendLocked(t, forged, string(edited))
	if err := newSealer(t, k).Seal(bg, forged); err != nil {
		t.Fatal(err)
	}
	store, _ := os.ReadFile(StorePath(forged))
	if fi, _ := os.Stat(StorePath(path)); fi.Size() != int64(len(store)) {
		t.Fatalf("forged store is %d bytes, the real one %d: the test needs the same size", len(store), fi.Size())
	}
	if err := os.WriteFile(StorePath(path), store, 0o600); err != nil {
		t.Fatal(err)
	}

	appendLocked(t, path, lines(7, 8))
	before, _ := os.ReadFile(CheckpointsPath(path))
	err := s.Seal(bg, path)
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "no longer extends the newest checkpoint of 6 lines") {
		t.Fatalf("Seal = %v, want tampering", err)
	}
	if after, _ := os.ReadFile(CheckpointsPath(path)); string(after) != string(before) {
		t.Fatal("a checkpoint was signed over the edited history")
	}
	if res := check(t, path, pub); res.Failure == nil {
		t.Fatal("the edit verifies")
	}
}

func TestInProcessTruncationDetected(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 6))
	s := newSealer(t, k)
	if err := s.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(bg, path); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "cut back") {
		t.Fatalf("Seal = %v", err)
	}
}

func TestTornCheckpointRecordCut(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 3))
	if err := newSealer(t, k).Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(CheckpointsPath(path), os.O_WRONLY|os.O_APPEND, 0)
	_, _ = f.WriteString("test/audit.jsonl\n3\nAAAA")
	_ = f.Close()
	appendLocked(t, path, lines(4, 5))
	if err := newSealer(t, k).Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	if res := check(t, path, pub); res.Failure != nil || res.Checkpoints != 2 || res.Sealed != 5 {
		t.Fatalf("check = %+v failure %v", res, res.Failure)
	}
}

func TestSidecarSymlinkNotFollowed(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 3))
	target := path + ".elsewhere"
	if err := os.Symlink(target, StorePath(path)); err != nil {
		t.Fatal(err)
	}
	if err := newSealer(t, k).Seal(bg, path); err == nil {
		t.Fatal("sealed through a symlinked store")
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("symlink target was created: %v", err)
	}
}

func rewrite(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%q not in file", old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestWatchedPathSealsOtherWritersLines(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 2))
	s := newSealer(t, k)
	if err := s.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	s.Watch(path)
	// Only the Python sink writes in this interval; this process wrote nothing.
	appendLocked(t, path, lines(3, 5))
	if err := s.SealPending(bg); err != nil {
		t.Fatal(err)
	}
	if res := check(t, path, pub); res.Failure != nil || res.Sealed != 5 || res.Checkpoints != 2 {
		t.Fatalf("check = %+v failure %v", res, res.Failure)
	}
	// A round with nothing new appends nothing.
	before, _ := os.ReadFile(CheckpointsPath(path))
	if err := s.SealPending(bg); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(CheckpointsPath(path)); string(after) != string(before) {
		t.Fatal("checkpoint appended without new lines")
	}
}

func TestRotatedWithSidecarsStartsANewTree(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 4))
	s := newSealer(t, k)
	if err := s.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", StoreSuffix, CheckpointsSuffix} {
		if err := os.Rename(path+suffix, path+".1"+suffix); err != nil {
			t.Fatal(err)
		}
	}
	// Sealed between the rotation and the next write: nothing to do.
	if err := s.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	appendLocked(t, path, lines(5, 6))
	if err := s.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	for p, n := range map[string]int64{path: 2, path + ".1": 4} {
		if res := check(t, p, pub); res.Failure != nil || res.Sealed != n {
			t.Fatalf("%s: check = %+v failure %v", p, res, res.Failure)
		}
	}
}

// A restart that finds hashed lines and no checkpoint seals afresh (a
// crash during the first seal looks the same), but warns: the checkpoints
// sidecar may have been removed to drop signed history.
func TestRestartWarnsWhenTheStoreHoldsUnsignedLines(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 6))
	if err := newSealer(t, k).Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(CheckpointsPath(path)); err != nil {
		t.Fatal(err)
	}
	s, logs := observedSealer(t, k, zap.WarnLevel)
	if err := s.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	warned := logs.FilterMessageSnippet("holds lines no checkpoint signs").All()
	if len(warned) != 1 || warned[0].ContextMap()["lines"] != int64(6) {
		t.Fatalf("warnings %v, want one for 6 lines", logs.All())
	}

	// A fresh file, never sealed, is no such case.
	fresh := auditPath(t)
	appendLocked(t, fresh, lines(1, 2))
	if err := s.Seal(bg, fresh); err != nil {
		t.Fatal(err)
	}
	if n := logs.FilterMessageSnippet("holds lines no checkpoint signs").Len(); n != 1 {
		t.Fatalf("%d warnings after sealing a new file, want still 1", n)
	}
}

// A file that fails the same way at every seal is logged once, and again
// only after it was sealed or failed some other way.
func TestSealErrorsAreLoggedOncePerCause(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 2))
	s, logs := observedSealer(t, k, zap.ErrorLevel)
	if err := os.Symlink(os.DevNull, StorePath(path)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := s.Seal(bg, path); err == nil {
			t.Fatal("sealed through a symlinked store")
		}
	}
	if n := logs.Len(); n != 1 {
		t.Fatalf("%d errors logged for three alike failures, want 1", n)
	}
	if err := os.Remove(StorePath(path)); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.DevNull, StorePath(path)+".x"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(StorePath(path)+".x", StorePath(path)); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal(bg, path); err == nil {
		t.Fatal("sealed through a symlinked store")
	}
	if n := logs.Len(); n != 2 {
		t.Fatalf("%d errors logged, want a second after a success", n)
	}
}

// A restarted sealer checks the file's own tree against the newest
// checkpoint, not the store's interior hashes: a line edited with its
// record hash in the store rewritten to match (the interior hashes left
// as they were) is refused at start.
func TestRestartRefusesAnEditWhoseRecordHashWasRewritten(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 8))
	if err := newSealer(t, k).Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	rewrite(t, path, `{"n":3}`, `{"n":4}`)
	var forged tlog.Hash
	lh := NewLeafHasher(func(h tlog.Hash) error { forged = h; return nil })
	if _, err := lh.Write([]byte("{\"n\":4}\n")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(StorePath(path), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(forged[:], tlog.StoredHashIndex(0, 2)*tlog.HashSize); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()

	err = newSealer(t, k).Seal(bg, path)
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "the first 8 lines do not match the newest checkpoint's root hash") {
		t.Fatalf("Seal = %v, want tampering", err)
	}
}

// A first seal of this process that hashed lines and then failed to
// sign its checkpoint leaves the same state as removed checkpoints; the
// retries do not warn of it as found.
func TestOwnFailedFirstSealIsNoUnsignedWarning(t *testing.T) {
	k, _ := testKeys(t, "test")
	failing := *k
	failing.Signer = failingSigner{k.Signer}
	path := auditPath(t)
	appendLocked(t, path, lines(1, 2))
	core, logs := observer.New(zap.WarnLevel)
	s, err := NewSealer(Settings{Keys: &failing, Interval: 1e9, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Seal(bg, path); err == nil {
			t.Fatal("sealed with a signer that fails")
		}
	}
	if fi, err := os.Stat(StorePath(path)); err != nil || fi.Size() == 0 {
		t.Fatalf("the store should hold the hashed lines: %v", err)
	}
	if n := logs.FilterMessageSnippet("holds lines no checkpoint signs").Len(); n != 0 {
		t.Fatalf("%d unsigned warnings for this process's own failed seal", n)
	}
}

type failingSigner struct{ note.Signer }

func (failingSigner) Sign([]byte) ([]byte, error) { return nil, errors.New("signer down") }

// A seal that repairs damage and then fails (a full disk tears the hash
// store's append every time) warns of the repair once per episode, not
// once per interval; after a seal that succeeds, new damage warns again.
func TestRepairWarnedOncePerFailingEpisode(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 2))
	s, logs := observedSealer(t, k, zap.WarnLevel)
	if err := s.Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	cps := CheckpointsPath(path)
	episode := func() {
		t.Helper()
		if err := os.Rename(cps, cps+".aside"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(os.DevNull, cps); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			tearStore(t, path)
			if err := s.Seal(bg, path); err == nil {
				t.Fatal("sealed through a symlinked checkpoints sidecar")
			}
		}
		if err := os.Remove(cps); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(cps+".aside", cps); err != nil {
			t.Fatal(err)
		}
		if err := s.Seal(bg, path); err != nil {
			t.Fatal(err)
		}
	}
	episode()
	if n := logs.FilterMessage("integrity: repaired crash damage").Len(); n != 1 {
		t.Fatalf("%d repair warnings over one failing episode of three seals, want 1", n)
	}
	episode()
	if n := logs.FilterMessage("integrity: repaired crash damage").Len(); n != 2 {
		t.Fatalf("%d repair warnings over two episodes, want 2", n)
	}
}

// tearStore appends part of a record to the hash store, as an append cut
// short by a full disk leaves it.
func tearStore(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(StorePath(path), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Write([]byte("torn")); err != nil {
		t.Fatal(err)
	}
}
