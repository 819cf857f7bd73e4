package filesink

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// dirsFromRoot returns the filesystem root and each directory below it
// down to dir, outermost first.
func dirsFromRoot(dir string) []string {
	var dirs []string
	for d := dir; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(dirs)
	return dirs
}

// restartOverAncestors leaves a file at base/events.jsonl written by an
// earlier run, whose directories above the base a crash may have left
// with entries not durable, and returns its path.
func restartOverAncestors(t *testing.T) (path, parent string) {
	t.Helper()
	parent = t.TempDir()
	path = filepath.Join(parent, "a", "b", "audit", "events.jsonl")
	s, err := New(Options{Path: path, Fsync: FsyncBatch})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(0, 0)))
	require.NoError(t, s.Close())
	return path, parent
}

// TestARestartSyncsTheDirectoriesAboveTheBase: the first open after a
// restart syncs every directory from the filesystem root down to the
// file's, the ones above the base included, before a batch is
// acknowledged; the next batch syncs none.
func TestARestartSyncsTheDirectoriesAboveTheBase(t *testing.T) {
	path, _ := restartOverAncestors(t)
	s, ds := dirSyncSink(t, path, FsyncBatch, nil, 0)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(1, 1)))
	require.Equal(t, dirsFromRoot(filepath.Dir(path)), ds.syncedList())
	calls := ds.count()
	require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(2, 2)))
	require.Equal(t, calls, ds.count(), "no directory sync once synced")
}

// TestARestartWhoseSyncAboveTheBaseFailsIsNotAcknowledged: a directory
// above the base's parent whose sync fails fails the batch, and the next
// batch syncs it again first.
func TestARestartWhoseSyncAboveTheBaseFailsIsNotAcknowledged(t *testing.T) {
	path, parent := restartOverAncestors(t)
	s, ds := dirSyncSink(t, path, FsyncBatch, nil, 0)
	ds.failWhen(func(dir string) bool { return dir == parent })
	require.ErrorIs(t, s.WriteBatch(context.Background(), testSession, numberedLines(1, 1)), unix.EIO)
	requireNotAckedUntilSynced(t, s, ds, testSession, path, parent)
}

// TestADirectoryAboveTheBaseThatCannotBeOpenedIsSkipped: a collector
// refused read access to a directory above the base's parent cannot sync
// it, and goes on; refused on the base or its parent, the batch fails.
func TestADirectoryAboveTheBaseThatCannotBeOpenedIsSkipped(t *testing.T) {
	path, parent := restartOverAncestors(t)
	base := filepath.Dir(path)
	for _, c := range []struct {
		refused string
		errno   unix.Errno
		fails   bool
	}{
		{parent, unix.EACCES, false}, {filepath.Dir(base), unix.EACCES, true}, {base, unix.EACCES, true},
		// A mount that does not sync directories, or a read-only one.
		{parent, unix.EINVAL, false}, {parent, unix.ENOTSUP, false}, {parent, unix.EROFS, false},
		{base, unix.EINVAL, true},
	} {
		var synced []string
		s, err := New(Options{Path: path, Fsync: FsyncBatch, syncDirFn: func(dir string) error {
			if dir == c.refused {
				return &fs.PathError{Op: "fsync", Path: dir, Err: c.errno}
			}
			synced = append(synced, dir)
			return nil
		}})
		require.NoError(t, err)
		err = s.WriteBatch(context.Background(), testSession, numberedLines(1, 1))
		require.NoError(t, s.Close())
		if c.fails {
			require.ErrorIs(t, err, c.errno, c.refused)
			continue
		}
		require.NoError(t, err, c.refused)
		require.NotContains(t, synced, parent)
		require.Contains(t, synced, filepath.Dir(parent))
	}
}
