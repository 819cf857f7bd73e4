package spool

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A directory at the sidecar's path stops Open (every trim would fail),
// and the error says what is there: the rename it failed on alone says
// only "file exists".
func TestSidecarDirectoryIsNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	writeSpool(t, path, eventLines(t, 1, 2))
	require.NoError(t, os.Remove(path+".offset"))
	require.NoError(t, os.Mkdir(path+".offset", 0o700))
	_, err := Open(context.Background(), Options{Path: path, Check: CanonicalEvent, AdoptValid: true})
	require.Error(t, err)
	require.Contains(t, err.Error(), "not a regular file")
}
