package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// A rotated log whose segments and active file were all removed leaves its
// sidecars: verify of the directory checks that log and finds every
// segment missing, rather than finding no file and passing.
func TestVerifyDirectoryWithEveryFileOfATrailRemoved(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 40)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	for _, s := range segs {
		require.NoError(t, os.Remove(s.Path))
	}
	require.NoError(t, os.Remove(path))
	res := run(t, "", "verify", "--key", pub, filepath.Dir(path))
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "is missing, and no retention record says it was removed")
	require.Contains(t, res.stdout, "FAILED")
}

// The same for a log that never rotated: its checkpoints sign lines of a
// file that is gone.
func TestVerifyDirectoryWithASealedFileRemoved(t *testing.T) {
	path, _, pub := sealedFixture(t)
	dir := t.TempDir() // the fixture's directory holds the keys too
	moved := filepath.Join(dir, filepath.Base(path))
	for _, suffix := range []string{integrity.CheckpointsSuffix, integrity.StoreSuffix} {
		require.NoError(t, os.Rename(path+suffix, moved+suffix))
	}
	for _, arg := range []string{dir, moved} {
		res := run(t, "", "verify", "--key", pub, arg)
		require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
		require.Contains(t, res.stdout, moved+": integrity: the audit file is missing, but its signed history is there: it is checked as an empty file\n")
		require.Contains(t, res.stdout, "checkpoint #1 covers 6 lines but the file has only 0")
	}
}

// A log whose checkpoints sign no line yet (log reset of an empty file, a
// templated path's file about to be made) loses nothing when its file is
// not there; the sidecars log reset kept aside name no audit file.
func TestVerifyDirectoryWithALogOfNoLinesAndNoFile(t *testing.T) {
	path, keyPath, pub := sealedFixture(t)
	dir := t.TempDir()
	moved := filepath.Join(dir, filepath.Base(path))
	require.NoError(t, os.WriteFile(moved, nil, 0o600))
	for _, suffix := range []string{integrity.CheckpointsSuffix, integrity.StoreSuffix} {
		require.NoError(t, os.Rename(path+suffix, moved+suffix))
	}
	res := run(t, "", "log", "reset", "--signing-key", keyPath, moved)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.NoError(t, os.Remove(moved))
	res = run(t, "", "verify", "--key", pub, dir)
	require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "integrity: lines=0 sealed=0 unsealed=0 checkpoints=1")
	require.Contains(t, res.stdout, "files=1 lines=0")
}
