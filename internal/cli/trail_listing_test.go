package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A directory of several audit files side by side (a {session_id} path),
// with segments plain, compressed and both, two names of one number, a
// sidecar, a link and a subdirectory, expands to the same paths whether
// its segments are found in the one listing or listed per audit file.
func TestVerifyListsADirectoryOfManyAuditFilesOnce(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))
	for _, name := range []string{
		"a-20261206T010000Z-000001.jsonl", "a-20261206T010000Z-000001.jsonl.zst",
		"a-20261206T020000Z-000002.jsonl", "a-20261206T030000Z-000002.jsonl.zst", "a.jsonl",
		"b-20261206T010000Z-000001.jsonl.zst", "b.jsonl", "b.jsonl.segments",
		"c-20261206T010000Z-000001.jsonl", // its active file rotated, none yet
		"d.jsonl", "d.jsonl.checkpoints", "notes.txt",
		"sub/e-20261206T010000Z-000001.jsonl", "sub/e.jsonl",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o600))
	}
	require.NoError(t, os.Symlink(filepath.Join(dir, "d.jsonl"), filepath.Join(dir, "f.jsonl")))
	in := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = filepath.Join(dir, n)
		}
		return out
	}

	paths, l, err := expandArgs([]string{dir}, true)
	require.NoError(t, err)
	require.Equal(t, in("a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl", "notes.txt", "sub/e.jsonl"), paths)
	for name, want := range map[string]bool{"a.jsonl": true, "b.jsonl": true, "c.jsonl": true, "d.jsonl": false,
		"notes.txt": false, "sub/e.jsonl": true, "g.jsonl": false} {
		require.Equal(t, want, l.hasSegments(filepath.Join(dir, name)), name)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "g.jsonl.segments"), nil, 0o600))
	require.True(t, l.hasSegments(filepath.Join(dir, "g.jsonl")), "a segments sidecar alone")
	// With a key, a log's sidecar names its audit path, found missing.
	paths, _, err = expandArgs([]string{dir}, true)
	require.NoError(t, err)
	require.Equal(t, in("a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl", "g.jsonl", "notes.txt", "sub/e.jsonl"), paths)

	// A segment named alone stands for its audit file, listed for it.
	paths, l, err = expandArgs(in("b-20261206T010000Z-000001.jsonl.zst"), true)
	require.NoError(t, err)
	require.Equal(t, in("b.jsonl"), paths)
	require.True(t, l.hasSegments(paths[0]))

	parts, _, err := expandArgs([]string{dir}, false)
	require.NoError(t, err)
	require.Equal(t, in(
		"a-20261206T010000Z-000001.jsonl.zst", "a-20261206T020000Z-000002.jsonl", "a-20261206T030000Z-000002.jsonl.zst", "a.jsonl",
		"b-20261206T010000Z-000001.jsonl.zst", "b.jsonl",
		"c-20261206T010000Z-000001.jsonl",
		"d.jsonl", "notes.txt",
		"sub/e-20261206T010000Z-000001.jsonl", "sub/e.jsonl",
	), parts)

	segs, err := aloneArgs([]string{dir})
	require.NoError(t, err)
	require.Equal(t, in(
		"a-20261206T010000Z-000001.jsonl.zst", "a-20261206T020000Z-000002.jsonl", "a-20261206T030000Z-000002.jsonl.zst",
		"b-20261206T010000Z-000001.jsonl.zst", "c-20261206T010000Z-000001.jsonl", "sub/e-20261206T010000Z-000001.jsonl",
	), segs)
}
