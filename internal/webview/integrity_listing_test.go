package webview

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Whether a source is part of a rotated trail is told from one listing of
// its directory: closed segments beside it, or a segments sidecar.
func TestSourcesOfOneDirectoryAreToldAsTrailsFromOneListing(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"a-20261206T010000Z-000001.jsonl.zst", "a.jsonl",
		"b.jsonl", "b.jsonl.segments",
		"c.jsonl", "c.jsonl.checkpoints",
		"d-20261206T010000Z-000001.jsonl",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o600))
	}
	require.NoError(t, os.Symlink(filepath.Join(dir, "a-20261206T010000Z-000001.jsonl.zst"), filepath.Join(dir, "e-20261206T010000Z-000001.jsonl")))
	dirs := dirListings{}
	for name, want := range map[string]bool{"a.jsonl": true, "b.jsonl": true, "c.jsonl": false, "d.jsonl": true, "e.jsonl": false, "f.jsonl": false} {
		src := filepath.Join(dir, name)
		require.Equal(t, want, dirs.isTrail(src), name)
		require.Equal(t, want, dirs.isTrail(dir+"/./"+name), name)
	}
	require.Len(t, dirs, 1)
	require.False(t, dirs.isTrail(filepath.Join(dir, "missing", "a.jsonl")))
}
