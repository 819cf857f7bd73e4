package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// startCheck runs the collector's start seal over path with a new sealer.
func startCheck(t *testing.T, keyPath, path string) error {
	t.Helper()
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second})
	require.NoError(t, err)
	defer func() { require.NoError(t, sealer.Close(context.Background())) }()
	return sealer.SealAtStart(context.Background(), path)
}

// tempStores lists rebuild temporaries left in path's directory.
func tempStores(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.rebuild-*"))
	require.NoError(t, err)
	return m
}

// A rotated log whose store is lost is refused at start, naming the
// command; the command writes the store the sealer had written, and the
// log goes on: new lines are sealed on top, the trail verifies, and a
// segment verifies alone again.
func TestLogRebuildStoreAfterLoss(t *testing.T) {
	path, keyPath, pub, want := rotatedFixture(t, 17)
	store := integrity.StorePath(path)
	orig, err := os.ReadFile(store)
	require.NoError(t, err)
	require.NoError(t, os.Remove(store))
	segs, err := filesink.Segments(path)
	require.NoError(t, err)

	err = startCheck(t, keyPath, path)
	require.ErrorContains(t, err, "fewer than the")
	require.ErrorContains(t, err, "sandboxaudit log rebuild-store")
	require.NoError(t, os.Remove(store)) // the refused seal left an empty one
	res := run(t, "", "verify", "--key", pub, "--alone", segs[1].Path)
	require.NotEqual(t, 0, res.code, "a segment alone needs the store: %s", res.stdout)

	res = run(t, "", "log", "rebuild-store", "--key", pub, path)
	require.Equal(t, 0, res.code, res.stderr)
	lines := int64(strings.Count(string(want), "\n"))
	require.Contains(t, res.stdout, fmt.Sprintf("wrote %s: %d leaves", store, lines))
	got, err := os.ReadFile(store)
	require.NoError(t, err)
	require.Equal(t, orig, got, "the store the sealer wrote")
	fi, err := os.Lstat(store)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.Empty(t, tempStores(t, path))

	require.NoError(t, startCheck(t, keyPath, path))
	res = run(t, "", "verify", "--key", pub, "--alone", segs[1].Path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)

	// New lines, sealed on top by a collector started again.
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, sealer.SealAtStart(ctx, path))
	sink, err := filesink.New(filesink.Options{Path: path, OnWrite: sealer.Wrote,
		Rotation: &filesink.Rotation{MaxBytes: 4 << 10, BeforeRemove: sealer.Retire}})
	require.NoError(t, err)
	for i := range 3 {
		s, f := op(sessionA, "exec", fmt.Sprintf("c%015d", i), lines/2+1+int64(2*i), lines/2+2+int64(2*i)) // the session goes on
		require.NoError(t, sink.WriteBatch(ctx, sessionA.String(), []byte(canonLines(s, f))))
		require.NoError(t, sealer.SealPending(ctx))
	}
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(ctx))
	res = run(t, "", "verify", "--key", pub, filepath.Dir(path))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("lines=%d sealed=%d unsealed=0", lines+6, lines+6))
}

// A segment edited before the rebuild is refused, naming it, and no store
// is written.
func TestLogRebuildStoreRefusesAnEditedSegment(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 17)
	store := integrity.StorePath(path)
	require.NoError(t, os.Remove(store))
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	editSegmentLine(t, segs[1].Path, 3)

	res := run(t, "", "log", "rebuild-store", "--key", pub, path)
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stderr, filepath.Base(segs[1].Path))
	require.NotContains(t, res.stderr, filepath.Base(segs[0].Path))
	require.Contains(t, res.stderr, "nothing was written")
	_, err = os.Lstat(store)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Empty(t, tempStores(t, path))
}

// A store cut short (a torn write, a full disk) is written whole again;
// the signing key serves as well as the verifier key.
func TestLogRebuildStoreAfterTruncation(t *testing.T) {
	path, keyPath, _, _ := rotatedFixture(t, 17)
	store := integrity.StorePath(path)
	orig, err := os.ReadFile(store)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(store, int64(len(orig)/3+5)))
	require.ErrorContains(t, startCheck(t, keyPath, path), "log rebuild-store")

	res := run(t, "", "log", "rebuild-store", "--signing-key", keyPath, path)
	require.Equal(t, 0, res.code, res.stderr)
	got, err := os.ReadFile(store)
	require.NoError(t, err)
	require.Equal(t, orig, got)
	require.NoError(t, startCheck(t, keyPath, path))
}

// Retention removed the oldest segments: their lines' hashes cannot be
// computed again, and the command says so and that `log reset` remains.
func TestLogRebuildStoreRefusesARetainedTrail(t *testing.T) {
	path, _, pub, _ := retainedFixture(t, 17, 5)
	store := integrity.StorePath(path)
	require.NoError(t, os.Remove(store))

	res := run(t, "", "log", "rebuild-store", "--key", pub, path)
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stderr, "retention removed")
	require.Contains(t, res.stderr, "log reset")
	v, err := integrity.LoadVerifierKey(pub)
	require.NoError(t, err)
	sl, err := integrity.LoadSegmentLog(path, v)
	require.NoError(t, err)
	require.Len(t, sl.Retired, 3)
	var end int64
	for name, r := range sl.Retired {
		require.Contains(t, res.stderr, name)
		end = max(end, r.End())
	}
	require.Contains(t, res.stderr, fmt.Sprintf("(lines 1-%d of the log)", end))
	_, err = os.Lstat(store)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Empty(t, tempStores(t, path))
}

func TestLogRebuildStoreUsage(t *testing.T) {
	path, keyPath, pub := sealedFixture(t)
	for _, args := range [][]string{
		{path},
		{"--key", pub, "--signing-key", keyPath, path},
		{"--key", pub},
	} {
		res := run(t, "", append([]string{"log", "rebuild-store"}, args...)...)
		require.Equal(t, exitUsage, res.code, args)
	}
	res := run(t, "", "log", "rebuild-store", "--key", path+integrity.CheckpointsSuffix, path)
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, "--key")
}

// A log handed over from another key starts from the handover note's leaf,
// kept in the segments sidecar: the rebuilt store starts with it too.
func TestLogRebuildStoreOfAHandedOverLog(t *testing.T) {
	path, _, _, newKey, _ := handedOver(t)
	store := integrity.StorePath(path)
	orig, err := os.ReadFile(store)
	require.NoError(t, err)
	require.NoError(t, os.Remove(store))

	res := run(t, "", "log", "rebuild-store", "--signing-key", newKey, path)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, ": 3 leaves")
	got, err := os.ReadFile(store)
	require.NoError(t, err)
	require.Equal(t, orig, got)
	require.NoError(t, sealWith(t, path, newKey))
}

// A symbolic link at the store's path is replaced by the store, never
// written through: its target keeps its bytes.
func TestLogRebuildStoreReplacesASymlinkAtTheStore(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 17)
	store := integrity.StorePath(path)
	orig, err := os.ReadFile(store)
	require.NoError(t, err)
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("not a store\n"), 0o644))
	require.NoError(t, os.Remove(store))
	require.NoError(t, os.Symlink(victim, store))

	res := run(t, "", "log", "rebuild-store", "--key", pub, path)
	require.Equal(t, 0, res.code, res.stderr)
	got, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "not a store\n", string(got))
	fi, err := os.Lstat(store)
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), "the link was replaced: %v", fi.Mode())
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	got, err = os.ReadFile(store)
	require.NoError(t, err)
	require.Equal(t, orig, got)
}

// A log that never rotated is one file, worded so.
func TestLogRebuildStoreOfOneFile(t *testing.T) {
	path, _, pub := sealedFixture(t)
	require.NoError(t, os.Remove(integrity.StorePath(path)))
	res := run(t, "", "log", "rebuild-store", "--key", pub, path)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, ": 8 leaves from 1 file; the first 8 match the newest checkpoint")
	require.Contains(t, res.stdout, "), none after it is left for the collector to seal")
}

// A run killed while it wrote (SIGKILL, a crash) leaves its temporary
// store; the next run, holding the owner lock no other run can hold,
// removes it rather than letting a store's worth of bytes pile up per kill.
func TestLogRebuildStoreRemovesATemporaryAKilledRunLeft(t *testing.T) {
	path, _, pub := sealedFixture(t)
	require.NoError(t, os.Remove(integrity.StorePath(path)))
	stale := filepath.Join(filepath.Dir(path), "."+filepath.Base(integrity.StorePath(path))+".rebuild-123")
	require.NoError(t, os.WriteFile(stale, make([]byte, 4096), 0o600))
	res := run(t, "", "log", "rebuild-store", "--key", pub, path)
	require.Equal(t, 0, res.code, res.stderr)
	require.Empty(t, tempStores(t, path))
}

// A directory where the store goes cannot be replaced: it is refused up
// front, saying what to do, before the trail is read.
func TestLogRebuildStoreRefusesADirectoryAtTheStore(t *testing.T) {
	path, _, pub := sealedFixture(t)
	store := integrity.StorePath(path)
	require.NoError(t, os.Remove(store))
	require.NoError(t, os.Mkdir(store, 0o700))
	res := run(t, "", "log", "rebuild-store", "--key", pub, path)
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stderr, store+" is a directory: move it aside and run the command again")
	require.Contains(t, res.stderr, "nothing was written")
	require.Empty(t, tempStores(t, path))
}
