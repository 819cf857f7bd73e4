package spool

import (
	"context"
	"fmt"
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

// TestRefusedLockNamesItsPathOnce: a symbolic link or a FIFO in the lock
// file's place is refused naming the lock file once; the refusal said
// "spool lock L: L is a symlink, …: open L: too many levels …".
func TestRefusedLockNamesItsPathOnce(t *testing.T) {
	for name, plant := range map[string]func(lock string) error{
		"symlink": func(lock string) error { return os.Symlink(lock+".elsewhere", lock) },
		"fifo":    func(lock string) error { return syscall.Mkfifo(lock, 0o600) },
	} {
		path := filepath.Join(t.TempDir(), "spool.jsonl")
		lock := path + ".lock"
		require.NoError(t, plant(lock), name)
		_, err := Open(context.Background(), Options{Path: path})
		require.Error(t, err, name)
		require.Equal(t, 1, strings.Count(err.Error(), lock), "%s: %v", name, err)
		require.True(t, strings.HasPrefix(err.Error(), "spool lock "+lock+" is "), "%s: %v", name, err)
	}
}

// TestPathErrorKeepsTheTextAroundThePathError: a *PathError of the path
// inside a wrapped error, with text after it, gives its operation and
// cause in place; errors.Is still finds the cause.
func TestPathErrorKeepsTheTextAroundThePathError(t *testing.T) {
	path := "/spool/s.jsonl"
	err := pathError("spool", path, fmt.Errorf("the file was removed; create it again: %w (%s)",
		&os.PathError{Op: "open", Path: path, Err: syscall.ENOSPC}, "a hint"))
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Equal(t, "spool "+path+": the file was removed; create it again: open: no space left on device (a hint)", err.Error())
}
