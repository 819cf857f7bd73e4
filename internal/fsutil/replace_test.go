package fsutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReplaceFileReplacesPrivately(t *testing.T) {
	path := filepath.Join(t.TempDir(), "side")
	require.NoError(t, os.WriteFile(path, []byte("old\n"), 0o644))

	require.NoError(t, ReplaceFile(path, []byte("new\n")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(got))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.NoFileExists(t, path+".tmp")
}

// A symlink planted as the temporary file is not written through: it is
// removed, not followed.
func TestReplaceFileDoesNotWriteThroughASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("keep\n"), 0o600))
	path := filepath.Join(dir, "side")
	require.NoError(t, os.Symlink(target, path+".tmp"))

	require.NoError(t, ReplaceFile(path, []byte("new\n")))
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "keep\n", string(got))
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(got))
}

// A hard link planted as the temporary file is not written through either:
// opened with O_TRUNC, it overwrote the spool with the sidecar's text.
func TestReplaceFileDoesNotWriteThroughAHardLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "spool.jsonl")
	require.NoError(t, os.WriteFile(victim, []byte("line\n"), 0o600))
	path := filepath.Join(dir, "spool.jsonl.ahead")
	require.NoError(t, os.Link(victim, path+".tmp"))

	require.NoError(t, ReplaceFile(path, []byte("new\n")))
	got, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "line\n", string(got))
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(got))
}
