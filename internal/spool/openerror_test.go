package spool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenErrorNamesThePathOnce: a spool whose lock file cannot be
// opened (a directory this user may not write; here a name with no room
// for ".lock") is refused naming the lock file once, not also inside the
// *PathError.
func TestOpenErrorNamesThePathOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), strings.Repeat("s", 252))
	_, err := Open(context.Background(), Options{Path: path})
	require.ErrorIs(t, err, syscall.ENAMETOOLONG)
	require.Equal(t, 1, strings.Count(err.Error(), path), err.Error())

	// The data file's own open, which only permissions refuse once its
	// lock is taken (and root passes them): the same wording.
	err = pathError("spool", path, &os.PathError{Op: "open", Path: path, Err: syscall.EACCES})
	require.ErrorIs(t, err, syscall.EACCES)
	require.Equal(t, "spool "+path+": open: permission denied", err.Error())
}
