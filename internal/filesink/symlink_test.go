package filesink

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// victim is a file outside the audit directory that a symlink points to;
// it must never change.
func victim(t *testing.T) (path string, check func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(path, []byte("precious\n"), 0o600))
	return path, func() {
		t.Helper()
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, "precious\n", string(b), "the symlink's target was written")
	}
}

func TestSymlinkAtTemplatedFileIsRefused(t *testing.T) {
	base := t.TempDir()
	target, unchanged := victim(t)
	require.NoError(t, os.Symlink(target, filepath.Join(base, testSession+".jsonl")))
	s, err := New(Options{Path: base + "/{session_id}.jsonl"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })

	err = s.WriteBatch(context.Background(), testSession, []byte("{\"n\":1}\n"))
	require.ErrorIs(t, err, ErrSymlink)
	require.ErrorContains(t, err, testSession+".jsonl")
	unchanged()
}

func TestSymlinkedDirectoryBelowBaseIsRefused(t *testing.T) {
	base := t.TempDir()
	elsewhere := t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(base, testSession)))
	s, err := New(Options{Path: base + "/{session_id}/events.jsonl"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })

	err = s.WriteBatch(context.Background(), testSession, []byte("{\"n\":1}\n"))
	require.ErrorIs(t, err, ErrSymlink)
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing is created through the symlinked directory")
}

// TestSymlinkSwappedInAfterOpenIsRefused: the file was opened and cached,
// then replaced by a symlink to another file. The next write notices the
// path no longer names the open file, reopens, and refuses the symlink:
// neither the old (unlinked) file nor the target gets the lines.
func TestSymlinkSwappedInAfterOpenIsRefused(t *testing.T) {
	base := t.TempDir()
	target, unchanged := victim(t)
	s, err := New(Options{Path: base + "/{session_id}.jsonl"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.WriteBatch(context.Background(), testSession, []byte("{\"n\":1}\n")))

	path := filepath.Join(base, testSession+".jsonl")
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(target, path))
	err = s.WriteBatch(context.Background(), testSession, []byte("{\"n\":2}\n"))
	require.ErrorIs(t, err, ErrSymlink)
	unchanged()
}

// TestStaticPathSymlinkIsRefused: a plain (untemplated) path is not
// followed either.
func TestStaticPathSymlinkIsRefused(t *testing.T) {
	base := t.TempDir()
	target, unchanged := victim(t)
	path := filepath.Join(base, "audit.jsonl")
	require.NoError(t, os.Symlink(target, path))
	s, err := New(Options{Path: path})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.ErrorIs(t, s.WriteBatch(context.Background(), testSession, []byte("{\"n\":1}\n")), ErrSymlink)
	unchanged()
}

// TestSymlinkedBaseDirectoryIsAllowed: the directory before the first
// placeholder is the operator's choice and may be a symlink.
func TestSymlinkedBaseDirectoryIsAllowed(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "audit")
	require.NoError(t, os.Symlink(real, link))
	s, err := New(Options{Path: link + "/{session_id}.jsonl"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.WriteBatch(context.Background(), testSession, []byte("{\"n\":1}\n")))
	b, err := os.ReadFile(filepath.Join(real, testSession+".jsonl"))
	require.NoError(t, err)
	require.Equal(t, "{\"n\":1}\n", string(b))
}
