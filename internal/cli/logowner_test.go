package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// openSealer starts sealing path with the key, as a running collector
// does, and returns the sealer for the test to close.
func openSealer(t *testing.T, keyPath, path string) *integrity.Sealer {
	t.Helper()
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second})
	require.NoError(t, err)
	require.NoError(t, sealer.SealAtStart(context.Background(), path))
	return sealer
}

// sidecarBytes reads every sidecar of path, to show that a refused
// command wrote nothing.
func sidecarBytes(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range append([]string{""}, integrity.LogSidecarSuffixes()...) {
		b, err := os.ReadFile(path + s)
		if err == nil {
			out[s] = string(b)
		}
	}
	return out
}

// The commands that write a log's sidecars refuse while a collector seals
// the log, and run once it stopped.
func TestLogCommandsRefusedWhileSealing(t *testing.T) {
	path, keyPath, pub, _ := rotatedFixture(t, 17)
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-next", "--out", dir)
	require.Equal(t, 0, res.code, res.stderr)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"rebuild-store", []string{"log", "rebuild-store", "--key", pub, path}},
		{"reset", []string{"log", "reset", "--signing-key", keyPath, path}},
		{"handover", []string{"log", "handover", "--signing-key", keyPath, "--next-key", filepath.Join(dir, "cli-next.pub"), path}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sealer := openSealer(t, keyPath, path)
			before := sidecarBytes(t, path)
			res := run(t, "", tc.args...)
			require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
			require.Contains(t, res.stderr, "log "+tc.name+": a collector is sealing "+path+" (it holds "+integrity.OwnerLockPath(path)+"); stop it first")
			require.Equal(t, before, sidecarBytes(t, path), "nothing written")
			require.NoError(t, sealer.Close(context.Background()))
		})
	}
	// Stopped: rebuild-store runs (reset and handover are tested on
	// their own).
	res = run(t, "", "log", "rebuild-store", "--key", pub, path)
	require.Equal(t, 0, res.code, res.stderr)
}

// verify and show read a trail while its collector seals it: the owner
// lock beside the file is not taken for a segment.
func TestTrailDirectoryWithOwnerLock(t *testing.T) {
	path, keyPath, pub, want := rotatedFixture(t, 20)
	sealer := openSealer(t, keyPath, path)
	defer func() { require.NoError(t, sealer.Close(context.Background())) }()
	_, err := os.Lstat(integrity.OwnerLockPath(path))
	require.NoError(t, err)
	dir := filepath.Dir(path)
	res := run(t, "", "verify", "--key", pub, dir)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.NotContains(t, res.stdout+res.stderr, integrity.OwnerLockSuffix)
	res = run(t, "", "show", "--output", "jsonl", dir)
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, strings.Count(string(want), "\n"), strings.Count(res.stdout, "\n"), "every line shown, none from the lock")
	// Named with a glob, it is skipped as a sidecar.
	res = run(t, "", "verify", path, integrity.OwnerLockPath(path))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, "skipping "+integrity.OwnerLockPath(path))
}

// On a file system without flock every command that writes a log's
// sidecars warns that nothing keeps a collector away, and goes on.
func TestLogRebuildStoreWarnsWithoutFlock(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 17)
	v, err := integrity.LoadVerifierKey(pub)
	require.NoError(t, err)
	noFlock := func(string) (*integrity.OwnerLock, error) { return &integrity.OwnerLock{Unsupported: true}, nil }
	var out, errOut strings.Builder
	code := rebuildLockedStore(context.Background(), noFlock, path, v, Streams{Stdout: &out, Stderr: &errOut})
	require.Equal(t, exitOK, code, errOut.String())
	require.Equal(t, "log rebuild-store: the file system has no flock: make sure no collector is sealing "+path+"\n", errOut.String())
	require.Contains(t, out.String(), "log rebuild-store: "+path+": wrote ")
}

// A closed segment named instead of its audit file is refused: reset would
// start a second log over one segment of the first, and write its
// sidecars beside the segment.
func TestLogCommandsRefuseASegment(t *testing.T) {
	path, keyPath, pub, _ := rotatedFixture(t, 17)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	seg := segs[1].Path
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-next", "--out", dir)
	require.Equal(t, 0, res.code, res.stderr)
	for _, args := range [][]string{
		{"log", "rebuild-store", "--key", pub, seg},
		{"log", "reset", "--signing-key", keyPath, seg},
		{"log", "handover", "--signing-key", keyPath, "--next-key", filepath.Join(dir, "cli-next.pub"), seg},
	} {
		res := run(t, "", args...)
		require.Equal(t, exitProblems, res.code, "%v: %s", args, res.stdout+res.stderr)
		require.Contains(t, res.stderr, seg+" is a closed segment of "+path+": name the audit file; nothing was written", "%v", args)
		require.Equal(t, map[string]string{"": string(readFile(t, seg))}, sidecarBytes(t, seg), "%v: no sidecar beside the segment", args)
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return b
}
