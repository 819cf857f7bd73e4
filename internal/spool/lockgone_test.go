package spool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLockFileRemovedStillRefusesASecondOwner: the .lock file is removed
// while a spool is open (an operator clearing "stale" locks, a tmp
// cleaner: the lock file is never written, so it looks old). A second
// Open must still be refused, also after the file was trimmed or written
// again: two owners would each replay, trim and append to the same lines.
func TestLockFileRemovedStillRefusesASecondOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, _ := checkedSpool(t, path)
	refused := func(when string) {
		t.Helper()
		if err := os.Remove(path + ".lock"); !errors.Is(err, os.ErrNotExist) {
			require.NoError(t, err)
		}
		other, err := Open(context.Background(), Options{Path: path})
		if err == nil {
			_ = other.Close()
		}
		require.ErrorIs(t, err, ErrLocked, when)
		_, err = os.Lstat(path + ".lock")
		require.ErrorIs(t, err, os.ErrNotExist, "a refused Open leaves no lock file of its own: %s", when)
	}

	require.NoError(t, s.Append(context.Background(), eventLines(t, 1, 2)))
	refused("while open")

	_, err := s.Replay(context.Background(), 10, 1<<20, func(context.Context, []byte, int) error { return nil })
	require.NoError(t, err)
	require.NoError(t, s.Append(context.Background(), eventLines(t, 3, 3)))
	refused("after a trim replaced the file")

	require.NoError(t, os.Remove(path))
	require.NoError(t, s.Append(context.Background(), eventLines(t, 4, 4)))
	refused("after the removed file was written again")

	_, err = s.Replay(context.Background(), 10, 1<<20, func(context.Context, []byte, int) error { return errors.New("down") })
	require.Error(t, err)
	require.NoError(t, s.Close())
	again, err := Open(context.Background(), Options{Path: path})
	require.NoError(t, err, "Close lets the next owner in")
	require.NoError(t, again.Close())
}

// TestSpoolAndLockRemovedStillRefusesASecondOwner: the spool file and its
// .lock file both removed while a spool is open, before anything was
// appended (a cleaner of files that look unused). Each flock is on a file
// no longer at the path, so a second Open would make both anew and hold
// them; it must be refused all the same, while the first is open.
func TestSpoolAndLockRemovedStillRefusesASecondOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, _ := checkedSpool(t, path)
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Remove(path+".lock"))
	other, err := Open(context.Background(), Options{Path: path})
	if err == nil {
		_ = other.Close()
	}
	require.ErrorIs(t, err, ErrLocked)

	// The whole directory removed, the spool's lines not written back yet,
	// and a path to it through a link.
	require.NoError(t, os.RemoveAll(filepath.Dir(path)))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(filepath.Dir(path), link))
	for _, p := range []string{path, filepath.Join(link, filepath.Base(path))} {
		other, err = Open(context.Background(), Options{Path: p})
		if err == nil {
			_ = other.Close()
		}
		require.ErrorIs(t, err, ErrLocked, p)
	}

	require.NoError(t, s.Close())
	again, err := Open(context.Background(), Options{Path: path})
	require.NoError(t, err, "Close lets the next owner in")
	require.NoError(t, again.Close())
}
