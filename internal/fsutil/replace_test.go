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

// A link planted as the temporary file is removed, not written through:
// opened with O_TRUNC, a hard link there had the spool overwritten with
// the sidecar's text.
func TestReplaceFileDoesNotWriteThroughALink(t *testing.T) {
	for name, plant := range map[string]func(oldname, newname string) error{
		"symlink":   os.Symlink,
		"hard link": os.Link,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			victim := filepath.Join(dir, "spool.jsonl")
			require.NoError(t, os.WriteFile(victim, []byte("line\n"), 0o600))
			path := filepath.Join(dir, "spool.jsonl.ahead")
			require.NoError(t, plant(victim, path+".tmp"))

			require.NoError(t, ReplaceFile(path, []byte("new\n")))
			got, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, "line\n", string(got))
			got, err = os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "new\n", string(got))
		})
	}
}
