package filesink

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// heldSync is a syncDirFn that holds the first sync of dir until letGo
// (bounded), telling entered when it starts; every sync then goes to ds.
type heldSync struct {
	ds          *dirSyncs
	dir         string
	once        sync.Once
	entered     chan struct{}
	release     chan struct{}
	releaseOnce sync.Once
}

// newHeldSync holds the first sync of dir, then passes every sync to ds;
// the test's end lets the held sync go.
func newHeldSync(t *testing.T, ds *dirSyncs, dir string) *heldSync {
	h := &heldSync{ds: ds, dir: dir, entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(h.letGo)
	return h
}

// letGo ends the hold of the first sync; it may be called again.
func (h *heldSync) letGo() { h.releaseOnce.Do(func() { close(h.release) }) }

func (h *heldSync) sync(dir string) error {
	if dir == h.dir {
		first := false
		h.once.Do(func() { first = true })
		if first {
			close(h.entered)
			select {
			case <-h.release:
			case <-time.After(time.Minute):
			}
		}
	}
	return h.ds.sync(dir)
}

// firstBatchHeld writes the first session's batch to s in the background
// and returns once h holds that batch's sync of the base's parent. finish
// lets the sync go and returns the batch's error.
func firstBatchHeld(t *testing.T, s *Sink, h *heldSync) (finish func() error) {
	t.Helper()
	firstDone := make(chan struct{})
	var firstErr error
	go func() {
		defer close(firstDone)
		firstErr = s.WriteBatch(context.Background(), testSession, numberedLines(0, 0))
	}()
	// A failed assertion ends the test before the files go.
	t.Cleanup(func() {
		h.letGo()
		waitClosed(t, firstDone, "the first session's batch")
	})
	waitClosed(t, h.entered, "the first session's sync of the base's parent")
	return func() error {
		h.letGo()
		waitClosed(t, firstDone, "the first session's batch")
		return firstErr
	}
}

// waitClosed fails the test unless ch is closed within a minute.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestAFileUnderADirectoryWhoseEntrySyncIsUnderwayWaitsForASync: one
// session's open makes the shared base directory (and one above it) and
// syncs the parent; while that sync is under way, another session finds
// the directory there and makes its file in it. That file's batch is
// acknowledged only after a sync of the parent that began once the
// directory was there: its own, not the first session's, which may yet
// fail.
func TestAFileUnderADirectoryWhoseEntrySyncIsUnderwayWaitsForASync(t *testing.T) {
	for _, tc := range []struct {
		below           string
		parentSyncFails bool
	}{
		{"audit", true}, {"audit", false},
		{filepath.Join("made", "audit"), true}, {filepath.Join("made", "audit"), false},
	} {
		parentSyncFails := tc.parentSyncFails
		name := tc.below + map[bool]string{true: "/failing", false: "/succeeding"}[parentSyncFails]
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			base := filepath.Join(parent, tc.below)
			ds := &dirSyncs{}
			ds.failWhen(func(dir string) bool { return parentSyncFails && dir == parent })
			h := newHeldSync(t, ds, parent)
			s, err := New(Options{Path: filepath.Join(base, "{session_id}.jsonl"), Fsync: FsyncBatch, syncDirFn: h.sync})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			finishFirst := firstBatchHeld(t, s, h)

			const other = "0e4a2a7c-3b1f-4c55-9d0e-7f6b5a4c3d2e"
			err = s.WriteBatch(context.Background(), other, numberedLines(0, 0))
			if parentSyncFails {
				require.ErrorIs(t, err, unix.EIO, "the base's entry is not durable")
			} else {
				require.NoError(t, err)
				require.Contains(t, ds.syncedList(), parent,
					"acknowledged only after its own sync of the base's parent")
			}
			firstErr := finishFirst()
			if parentSyncFails {
				require.ErrorIs(t, firstErr, unix.EIO)
				requireNotAckedUntilSynced(t, s, ds, other, filepath.Join(base, other+".jsonl"), parent)
			} else {
				require.NoError(t, firstErr)
			}
		})
	}
}

// TestARestartSyncsTheDirectoriesOfAFileItFindsOnce: a collector that
// crashed after making a file whose directory syncs failed leaves it
// there; the next one's first open of the path syncs every directory from
// the base's parent down to the file before a batch is acknowledged in
// it, and an open after an eviction syncs none again.
func TestARestartSyncsTheDirectoriesOfAFileItFindsOnce(t *testing.T) {
	for _, templated := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "templated"}[templated], func(t *testing.T) {
			parent := t.TempDir()
			base := filepath.Join(parent, "audit")
			tmpl := filepath.Join(base, "events.jsonl")
			path, dirs := tmpl, []string{parent, base}
			if templated {
				tmpl = filepath.Join(base, "{session_id}", "events.jsonl")
				path = filepath.Join(base, testSession, "events.jsonl")
				dirs = append(dirs, filepath.Dir(path))
			}
			ctx := context.Background()
			crashed, ds := dirSyncSink(t, tmpl, FsyncBatch, nil, 0)
			ds.failing(true)
			require.ErrorIs(t, crashed.WriteBatch(ctx, testSession, numberedLines(0, 0)), unix.EIO)
			_, err := os.Stat(path)
			require.NoError(t, err, "the file is made, its batch refused")
			require.NoError(t, crashed.Close())

			s, ds := dirSyncSink(t, tmpl, FsyncBatch, nil, 1)
			ds.failing(true)
			require.ErrorIs(t, s.WriteBatch(ctx, testSession, numberedLines(1, 1)), unix.EIO,
				"a file found after a restart is not acknowledged in before its directories are synced")
			requireNotAckedUntilSynced(t, s, ds, testSession, path, filepath.Dir(path))
			require.Subset(t, ds.syncedList(), dirs)
			if !templated {
				return
			}
			// Another session takes the only cache slot; the first one's
			// open after that syncs no directory.
			const other = "0e4a2a7c-3b1f-4c55-9d0e-7f6b5a4c3d2e"
			require.NoError(t, s.WriteBatch(ctx, other, numberedLines(0, 0)))
			calls := ds.count()
			require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(40, 40)))
			require.Equal(t, calls, ds.count(), "no directory sync at a reopen after eviction")
		})
	}
}

// TestAFileAnotherWriterPutAtThePathSyncsItsDirectory: a file another
// writer made at the path in place of the one the sink synced, found while
// cached or at an open after an eviction, is one this process has not made
// durable: its directory is synced before a batch is acknowledged in it.
func TestAFileAnotherWriterPutAtThePathSyncsItsDirectory(t *testing.T) {
	for _, evicted := range []bool{false, true} {
		t.Run(map[bool]string{false: "cached", true: "evicted"}[evicted], func(t *testing.T) {
			base := t.TempDir()
			s, ds := dirSyncSink(t, filepath.Join(base, "{session_id}.jsonl"), FsyncBatch, nil, 1)
			ctx := context.Background()
			path := filepath.Join(base, testSession+".jsonl")
			require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(0, 0)))
			if evicted {
				const other = "0e4a2a7c-3b1f-4c55-9d0e-7f6b5a4c3d2e"
				require.NoError(t, s.WriteBatch(ctx, other, numberedLines(0, 0)))
			}
			// Another writer rotates the file and makes a new one.
			require.NoError(t, os.Rename(path, path+".1"))
			require.NoError(t, os.WriteFile(path, nil, 0o600))
			ds.failing(true)
			require.ErrorIs(t, s.WriteBatch(ctx, testSession, numberedLines(1, 1)), unix.EIO)
			requireNotAckedUntilSynced(t, s, ds, testSession, path, base)
		})
	}
}

// TestASyncThatBeganBeforeAnEntryWasMadeAgainDoesNotMakeItDurable: the
// base is removed while one session's sync of its parent is under way,
// and another session makes it again, whose own sync of the parent fails.
// The first sync ends after that, but began before the new entry was
// there: a third session's file in the new base is not acknowledged in
// before a sync of the parent succeeds.
func TestASyncThatBeganBeforeAnEntryWasMadeAgainDoesNotMakeItDurable(t *testing.T) {
	parent := t.TempDir()
	base := filepath.Join(parent, "audit")
	require.NoError(t, os.Mkdir(base, 0o700))
	// The first sync of the parent is held, then succeeds; every later
	// one fails.
	ds := &dirSyncs{}
	h := newHeldSync(t, ds, parent)
	var parentSyncs atomic.Int32
	syncDir := func(dir string) error {
		if dir == parent && parentSyncs.Add(1) > 1 {
			return unix.EIO
		}
		return h.sync(dir)
	}
	s, err := New(Options{Path: filepath.Join(base, "{session_id}.jsonl"), Fsync: FsyncBatch, syncDirFn: syncDir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	finishFirst := firstBatchHeld(t, s, h)

	require.NoError(t, os.RemoveAll(base))
	const second = "0e4a2a7c-3b1f-4c55-9d0e-7f6b5a4c3d2e"
	require.ErrorIs(t, s.WriteBatch(ctx, second, numberedLines(0, 0)), unix.EIO,
		"the base made again is not durable")
	require.NoError(t, finishFirst())

	const third = "1f5b3b8d-4c2a-4d66-8e1f-8a7c6b5d4e3f"
	require.ErrorIs(t, s.WriteBatch(ctx, third, numberedLines(0, 0)), unix.EIO,
		"no sync of the parent began after the base was made again")
}
