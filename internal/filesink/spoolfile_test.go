package filesink

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// TestSpoolIsNeverWritten: the file sink refuses a file that is an HTTP
// sink's spool (another exporter's spool path, or the same file through a
// symlinked directory): the spool trims its file once replayed, and audit
// lines written into it were sent away and then cut out of it.
func TestSpoolIsNeverWritten(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	sp, err := spool.Open(context.Background(), spool.Options{Path: path})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sp.Close()) })

	alias := filepath.Join(t.TempDir(), "alias")
	require.NoError(t, os.Symlink(dir, alias))
	s, err := New(Options{Path: filepath.Join(alias, "events.jsonl")})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })

	err = s.WriteBatch(context.Background(), testSession, []byte("{\"n\":1}\n"))
	require.ErrorIs(t, err, ErrSpoolFile)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Zero(t, fi.Size(), "nothing written into the spool")
}
