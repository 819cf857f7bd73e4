package integrity

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// lockingSealer is a sealer that takes owner locks, as the collector's
// does, with its ERROR entries kept.
func lockingSealer(t *testing.T, k *Keys) (*Sealer, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.WarnLevel)
	s, err := NewSealer(Settings{Keys: k, Interval: 1e9, Logger: zap.New(core)})
	require.NoError(t, err)
	return s, logs
}

// sealedLog is an audit file of n lines sealed once by a lockingSealer,
// which holds its owner lock.
func sealedLog(t *testing.T, k *Keys, n int) (string, *Sealer, *observer.ObservedLogs) {
	t.Helper()
	path := auditPath(t)
	appendLocked(t, path, lines(1, n))
	s, logs := lockingSealer(t, k)
	require.NoError(t, s.Seal(bg, path))
	return path, s, logs
}

func TestOneSealerPerLog(t *testing.T) {
	k, pub := testKeys(t, "test")
	path, first, _ := sealedLog(t, k, 4)

	second, logs := lockingSealer(t, k)
	err := second.SealAtStart(bg, path)
	require.ErrorIs(t, err, ErrLogOwned)
	require.ErrorContains(t, err, path+": another collector")
	require.ErrorContains(t, err, "it holds "+OwnerLockPath(path))
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, 1)
	require.Equal(t, path, errs[0].ContextMap()["path"])
	// A later seal is refused too, and not logged again.
	require.ErrorIs(t, second.Seal(bg, path), ErrLogOwned)
	require.Len(t, logs.FilterLevelExact(zapcore.ErrorLevel).All(), 1)

	// A writer that only appends lines is not held up by the lock.
	appendLocked(t, path, lines(5, 6))
	first.Wrote(path, 2)
	require.NoError(t, first.Close(bg))

	// Restarted: the lock is free again.
	restarted, _ := lockingSealer(t, k)
	require.NoError(t, restarted.SealAtStart(bg, path))
	appendLocked(t, path, lines(7, 7))
	restarted.Wrote(path, 1)
	require.NoError(t, restarted.Close(bg))
	res := check(t, path, pub)
	require.Nil(t, res.Failure)
	require.EqualValues(t, 7, res.Sealed)
	require.NoError(t, second.Close(bg))
}

// Two sealers of one process (two exporters on one file) are two owners
// too: flock belongs to the open file, not the process.
func TestOwnerLockPerOpenFile(t *testing.T) {
	path := auditPath(t)
	a, err := LockLog(path)
	require.NoError(t, err)
	_, err = LockLog(path)
	require.ErrorIs(t, err, ErrLogOwned)
	a.Release()
	a.Release() // twice is fine
	b, err := LockLog(path)
	require.NoError(t, err)
	b.Release()
}

func TestOwnerLockFileIsPrivateAndNotFollowed(t *testing.T) {
	k, _ := testKeys(t, "test")
	path, s, _ := sealedLog(t, k, 2)
	fi, err := os.Lstat(OwnerLockPath(path))
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular())
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.NoError(t, s.Close(bg))

	// A symbolic link planted in the lock's place is refused, its target
	// neither created nor opened.
	other := auditPath(t)
	appendLocked(t, other, lines(1, 2))
	target := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.Symlink(target, OwnerLockPath(other)))
	s, _ = lockingSealer(t, k)
	err = s.Seal(bg, other)
	require.ErrorContains(t, err, OwnerLockPath(other)+" is a symbolic link (not followed)")
	_, err = os.Lstat(target)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Lstat(CheckpointsPath(other))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing sealed")
	require.NoError(t, s.Close(bg))
}

// A sealer that starts before the file sink made the directory makes it,
// as the sink would, to hold the lock from the start.
func TestOwnerLockMakesTheDirectory(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "new", "audit.jsonl")
	s, _ := lockingSealer(t, k)
	require.NoError(t, s.SealAtStart(bg, path))
	fi, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	_, err = LockLog(path)
	require.ErrorIs(t, err, ErrLogOwned)
	require.NoError(t, s.Close(bg))
}

func TestRebuildStoreUnderTheOwnerLock(t *testing.T) {
	path, pub, k := rotatedTrail(t, 40, true, 0)
	v, err := LoadVerifierKey(pub)
	require.NoError(t, err)
	s, _ := lockingSealer(t, k)
	require.NoError(t, s.SealAtStart(bg, path))
	_, err = LockLog(path)
	require.ErrorIs(t, err, ErrLogOwned, "no rebuild while a sealer holds the lock")
	_, err = RebuildStore(bg, nil, path, v)
	require.ErrorContains(t, err, "under the owner lock")

	require.NoError(t, s.Close(bg))
	o, err := LockLog(path)
	require.NoError(t, err)
	defer o.Release()
	res, err := RebuildStore(bg, o, path, v)
	require.NoError(t, err)
	require.EqualValues(t, 40, res.Leaves)
}

// Retention's record is written by the owner only: a sealer that does not
// hold the lock refuses to sign one.
func TestRetireNeedsTheOwnerLock(t *testing.T) {
	path, _, k := rotatedTrail(t, 40, false, 0)
	o, err := LockLog(path)
	require.NoError(t, err)
	defer o.Release()
	s, _ := lockingSealer(t, k)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	before, err := os.ReadFile(SegmentsPath(path))
	require.NoError(t, err)
	err = s.Retire(path, segs[0])
	require.True(t, errors.Is(err, ErrLogOwned), "Retire = %v", err)
	after, err := os.ReadFile(SegmentsPath(path))
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "no retention record")
	require.False(t, strings.Contains(string(after), retentionHeader))
}

// At start a templated path's files are sealed one after the other
// (SealAtStart each): the sealer holds the owner locks, a descriptor each,
// of at most maxIdleLogs of them, as it does between seals, and lets the
// others go. Files not made yet stand in for them (nothing to check).
func TestSealAtStartKeepsTheIdleBound(t *testing.T) {
	k, _ := testKeys(t, "test")
	s, _ := lockingSealer(t, k)
	dir := t.TempDir()
	const files = maxIdleLogs + 8
	for i := range files {
		require.NoError(t, s.SealAtStart(bg, sessionFile(dir, i)))
	}
	require.LessOrEqual(t, len(s.logs), maxIdleLogs)
	require.Equal(t, len(s.logs), ownerLocksHeld(t, dir, files), "the remembered files' locks, no others")
	require.NoError(t, s.Close(bg))
}

// Files refused at start (lines, no history: integrity turned on over a
// templated path's old files) stay refused, remembered so that each is
// logged once, but the sealer holds the owner locks of at most
// maxIdleLogs of them.
func TestRefusedFilesKeepTheIdleBound(t *testing.T) {
	k, _ := testKeys(t, "test")
	s, _ := lockingSealer(t, k)
	dir := t.TempDir()
	const files = maxIdleLogs + 8
	for i := range files {
		appendLocked(t, sessionFile(dir, i), lines(1, 1))
		require.ErrorIs(t, s.SealAtStart(bg, sessionFile(dir, i)), ErrNoHistory)
	}
	require.Len(t, s.logs, files, "every refusal remembered")
	require.LessOrEqual(t, ownerLocksHeld(t, dir, files), maxIdleLogs)
	require.NoError(t, s.Close(bg))
}

// ownerLocksHeld counts the first files session files of dir whose owner
// lock another open file holds.
func ownerLocksHeld(t *testing.T, dir string, files int) int {
	t.Helper()
	held := 0
	for i := range files {
		o, err := LockLog(sessionFile(dir, i))
		if errors.Is(err, ErrLogOwned) {
			held++
			continue
		}
		require.NoError(t, err)
		o.Release()
	}
	return held
}

// A round that seals more files than maxIdleLogs (a burst of sessions
// within one checkpoint interval) still leaves the sealer holding at most
// maxIdleLogs owner locks, a descriptor each, and holds not many more
// while it runs: otherwise a burst of new sessions could run the process
// out of descriptors.
func TestABurstOfFilesInOneRoundKeepsTheIdleBound(t *testing.T) {
	k, _ := testKeys(t, "test")
	s, _ := lockingSealer(t, k)
	peak := 0
	s.set.lockLog = func(path string) (*OwnerLock, error) {
		held := 0
		for _, l := range s.logs {
			if l.owner != nil && l.owner.f != nil {
				held++
			}
		}
		peak = max(peak, held)
		return lockLogMkdir(path)
	}
	dir := t.TempDir()
	const files = maxIdleLogs + 300
	for i := range files {
		p := sessionFile(dir, i)
		appendLocked(t, p, lines(1, 1))
		s.Wrote(p, 1)
	}
	require.NoError(t, s.SealPending(bg))
	require.LessOrEqual(t, len(s.logs), maxIdleLogs)
	require.LessOrEqual(t, ownerLocksHeld(t, dir, files), maxIdleLogs)
	require.Less(t, peak, maxIdleLogs+maxIdleLogs/4, "owner locks held during the round")
	require.NoError(t, s.Close(bg))
}

// An operator who removes the lock file ("a stale lock") while a sealer
// holds it must not open the log to a second sealer for good: the holder
// notices at its next seal and takes the lock at the path again, and if
// another process took it meanwhile, it stops sealing and says so.
func TestARemovedOwnerLockIsTakenAgain(t *testing.T) {
	k, _ := testKeys(t, "test")
	path, s, logs := sealedLog(t, k, 2)

	require.NoError(t, os.Remove(OwnerLockPath(path)))
	appendLocked(t, path, lines(3, 3))
	s.Wrote(path, 1)
	require.NoError(t, s.SealPending(bg))
	_, err := LockLog(path)
	require.ErrorIs(t, err, ErrLogOwned, "the sealer holds the lock at the path again")
	require.Len(t, logs.FilterMessageSnippet("owner lock").FilterLevelExact(zapcore.WarnLevel).All(), 1)

	// Removed again, and taken by another process before the next seal.
	require.NoError(t, os.Remove(OwnerLockPath(path)))
	other, err := LockLog(path)
	require.NoError(t, err)
	defer other.Release()
	appendLocked(t, path, lines(4, 4))
	s.Wrote(path, 1)
	require.ErrorIs(t, s.SealPending(bg), ErrLogOwned)
	require.Len(t, logs.FilterLevelExact(zapcore.ErrorLevel).All(), 1)
	require.NoError(t, s.Close(bg))
}

// Without flock the sealer warns once, not once per file: a templated
// path makes a file per session.
func TestNoFlockWarnedOncePerSealer(t *testing.T) {
	k, _ := testKeys(t, "test")
	dir := t.TempDir()
	core, logs := observer.New(zapcore.WarnLevel)
	var locked []string
	noFlock := func(path string) (*OwnerLock, error) {
		locked = append(locked, path)
		return &OwnerLock{Unsupported: true}, nil
	}
	s, err := NewSealer(Settings{Keys: k, Interval: 1e9, Logger: zap.New(core), OriginBase: dir, lockLog: noFlock})
	require.NoError(t, err)
	var paths []string
	for _, session := range []string{"s1", "s2", "s3"} {
		path := filepath.Join(dir, session+".jsonl")
		appendLocked(t, path, lines(1, 2))
		s.Wrote(path, 2)
		require.NoError(t, s.SealPending(bg))
		paths = append(paths, path)
	}
	require.NoError(t, s.Close(bg))
	require.Equal(t, paths, locked, "each file's lock was tried")
	warned := logs.FilterMessageSnippet("no flock").All()
	require.Len(t, warned, 1)
	require.Equal(t, zapcore.WarnLevel, warned[0].Level)
	require.Equal(t, paths[0], warned[0].ContextMap()["path"])
}

// A lock file found readable by others (made by hand, or copied) is made
// 0600: anyone who can open it can flock it, and so keep the collector
// from sealing its log.
func TestALooseOwnerLockIsMadePrivate(t *testing.T) {
	path := auditPath(t)
	require.NoError(t, os.WriteFile(OwnerLockPath(path), nil, 0o644))
	require.NoError(t, os.Chmod(OwnerLockPath(path), 0o666))
	o, err := LockLog(path)
	require.NoError(t, err)
	defer o.Release()
	fi, err := os.Lstat(OwnerLockPath(path))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// A lock file moved by hand over another this sealer holds (two files of
// one templated path) leaves the path locked by the sealer still: it goes
// on sealing, with neither a warning nor a refusal of its own file.
func TestAnOwnerLockMovedOverAnotherHeldIsKept(t *testing.T) {
	k, _ := testKeys(t, "test")
	dir := t.TempDir()
	a, b := sessionFile(dir, 1), sessionFile(dir, 2)
	s, logs := lockingSealer(t, k)
	for _, p := range []string{a, b} {
		appendLocked(t, p, lines(1, 2))
		require.NoError(t, s.Seal(bg, p))
	}
	require.NoError(t, os.Rename(OwnerLockPath(b), OwnerLockPath(a)))
	appendLocked(t, a, lines(3, 3))
	s.Wrote(a, 1)
	require.NoError(t, s.SealPending(bg))
	require.Empty(t, logs.All())
	_, err := LockLog(a)
	require.ErrorIs(t, err, ErrLogOwned)
	require.NoError(t, s.Close(bg))
}
