package filesink

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// dirSyncs is a syncDirFn that fails with EIO for the directories fail
// names and syncs the others for real, recording them.
type dirSyncs struct {
	mu     sync.Mutex
	fail   func(dir string) bool
	calls  int
	synced []string
}

func (d *dirSyncs) sync(dir string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	if d.fail != nil && d.fail(dir) {
		return unix.EIO
	}
	d.synced = append(d.synced, dir)
	return fsutil.SyncDir(dir)
}

// failing makes every sync fail (on) or none.
func (d *dirSyncs) failing(on bool) {
	d.failWhen(func(string) bool { return on })
}

func (d *dirSyncs) failWhen(fail func(dir string) bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fail = fail
}

func (d *dirSyncs) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

// syncedList returns the directories synced, in order.
func (d *dirSyncs) syncedList() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.synced)
}

func dirSyncSink(t *testing.T, path string, mode FsyncMode, r *Rotation, maxOpen int) (*Sink, *dirSyncs) {
	t.Helper()
	ds := &dirSyncs{}
	s, err := New(Options{Path: path, Fsync: mode, Rotation: r, MaxOpenFiles: maxOpen, syncDirFn: ds.sync})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, ds
}

// requireNotAckedUntilSynced: with the directory sync failing, batches to
// path fail, each trying the sync again, and nothing of them is written;
// once it recovers the next batch is acknowledged after dir was synced,
// and the one after costs no directory sync.
func requireNotAckedUntilSynced(t *testing.T, s *Sink, ds *dirSyncs, session, path, dir string) {
	t.Helper()
	ctx := context.Background()
	before, err := os.ReadFile(path)
	require.NoError(t, err, "the file is made, its batch refused")
	tries := ds.count()
	require.ErrorIs(t, s.WriteBatch(ctx, session, numberedLines(10, 11)), unix.EIO)
	require.Greater(t, ds.count(), tries, "the retried batch syncs the directory again")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "no refused batch is written")

	ds.failing(false)
	require.NoError(t, s.WriteBatch(ctx, session, numberedLines(20, 21)))
	require.Contains(t, ds.syncedList(), dir)
	calls := ds.count()
	require.NoError(t, s.WriteBatch(ctx, session, numberedLines(30, 30)))
	require.Equal(t, calls, ds.count(), "no directory sync once synced")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, append(append(before, numberedLines(20, 21)...), numberedLines(30, 30)...), got)
}

// TestAFirstOpenWhoseDirectorySyncFailsIsNotAcknowledged: a new file's
// directory entry is synced before its first batch is acknowledged; a
// sync that fails fails the batch and is tried again before the next.
func TestAFirstOpenWhoseDirectorySyncFailsIsNotAcknowledged(t *testing.T) {
	for _, mode := range []FsyncMode{FsyncBatch, FsyncAlways} {
		t.Run(string(mode), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "events.jsonl")
			s, ds := dirSyncSink(t, path, mode, nil, 0)
			ds.failing(true)
			require.ErrorIs(t, s.WriteBatch(context.Background(), testSession, numberedLines(0, 1)), unix.EIO)
			requireNotAckedUntilSynced(t, s, ds, testSession, path, dir)
		})
	}
}

// TestATemplatedFileSyncsItsNewDirectoriesBeforeItsBatch: a {session_id}
// path's new directory and new file are both synced before the batch is
// acknowledged, even when the file's descriptor left the cache between the
// failed batch and the retry.
func TestATemplatedFileSyncsItsNewDirectoriesBeforeItsBatch(t *testing.T) {
	base := t.TempDir()
	const other = "0e4a2a7c-3b1f-4c55-9d0e-7f6b5a4c3d2e"
	s, ds := dirSyncSink(t, filepath.Join(base, "{session_id}", "events.jsonl"), FsyncBatch, nil, 1)
	mine := filepath.Join(base, testSession)
	ds.failWhen(func(dir string) bool { return dir == mine })
	ctx := context.Background()
	require.ErrorIs(t, s.WriteBatch(ctx, testSession, numberedLines(0, 1)), unix.EIO)
	// Another session takes the only cache slot.
	require.NoError(t, s.WriteBatch(ctx, other, numberedLines(0, 0)))
	require.Contains(t, ds.syncedList(), base, "the new directory's entry")
	require.Equal(t, 1, cachedFiles(s))
	requireNotAckedUntilSynced(t, s, ds, testSession, filepath.Join(mine, "events.jsonl"), mine)
}

// TestAFileMadeAgainAfterItWasMovedAwaySyncsItsDirectory: the file made
// at the path when the sink finds its own moved away is synced like a
// first open's, and retried the same way.
func TestAFileMadeAgainAfterItWasMovedAwaySyncsItsDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	s, ds := dirSyncSink(t, path, FsyncBatch, nil, 0)
	ctx := context.Background()
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(0, 0)))
	require.NoError(t, os.Rename(path, filepath.Join(dir, "moved.jsonl")))
	ds.failing(true)
	require.ErrorIs(t, s.WriteBatch(ctx, testSession, numberedLines(1, 1)), unix.EIO)
	requireNotAckedUntilSynced(t, s, ds, testSession, path, dir)
}

// TestARotatedFileIsNotAcknowledgedInUntilItsDirectoryIsSynced: after a
// rotation whose directory sync failed, batches to the new file fail
// until a sync succeeds (which also makes the rename durable).
func TestARotatedFileIsNotAcknowledgedInUntilItsDirectoryIsSynced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	var ev rotationEvents
	clock := &fakeClock{t: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	r := ev.hook(&Rotation{Interval: time.Hour})
	clock.drive(r)
	s, ds := dirSyncSink(t, path, FsyncBatch, r, 0)
	ctx := context.Background()
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(0, 0)))
	// Failing first: the interval timer may rotate before the batch.
	ds.failing(true)
	clock.add(2 * time.Hour)
	require.ErrorIs(t, s.WriteBatch(ctx, testSession, numberedLines(1, 1)), unix.EIO)
	require.Len(t, ev.errors(), 1, "the segment's durability is told")
	// The clock stands still: no other rotation.
	requireNotAckedUntilSynced(t, s, ds, testSession, path, dir)
	requireSeqs(t, path, 1)
}

// TestFsyncNeverSyncsNoDirectory: with fsync never flushing is left to
// the kernel, directory entries included.
func TestFsyncNeverSyncsNoDirectory(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "{session_id}", "events.jsonl")
	s, ds := dirSyncSink(t, path, FsyncNever, &Rotation{MaxBytes: 1}, 0)
	ds.failing(true)
	for i := range 3 {
		require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(i, i)))
	}
	require.Zero(t, ds.count())
}

// TestDurableEntriesAreBounded: the entries remembered durable stay
// within maxDurable while a templated path opens file after file; a path
// whose entries were dropped syncs its directories again at its next open
// before a batch is acknowledged, and only then.
func TestDurableEntriesAreBounded(t *testing.T) {
	base := t.TempDir()
	s, ds := dirSyncSink(t, filepath.Join(base, "{session_id}", "events.jsonl"), FsyncBatch, nil, 1)
	s.maxDurable = 8
	ctx := context.Background()
	session := func(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }
	const sessions = 12
	for i := range sessions {
		require.NoError(t, s.WriteBatch(ctx, session(i), numberedLines(0, 0)))
	}
	s.mu.Lock()
	kept := len(s.durable)
	s.mu.Unlock()
	require.LessOrEqual(t, kept, s.maxDurable)

	// Every session's entries are dropped: each open syncs its
	// directories again, and after that none.
	s.mu.Lock()
	clear(s.durable)
	s.mu.Unlock()
	first := session(0)
	before := len(ds.syncedList())
	require.NoError(t, s.WriteBatch(ctx, first, numberedLines(1, 1)))
	require.Equal(t, append(dirsFromRoot(base), filepath.Join(base, first)), ds.syncedList()[before:])
	require.NoError(t, s.WriteBatch(ctx, session(1), numberedLines(1, 1)))
	calls := ds.count()
	require.NoError(t, s.WriteBatch(ctx, first, numberedLines(2, 2)))
	require.Equal(t, calls, ds.count(), "an open after an eviction syncs nothing")
}

// TestAFileInADirectoryAnotherPathMadeWaitsForItsSync: a directory made
// for one path whose entry's sync failed (the base, or one above it)
// holds the other paths' files too, cached or not: none is acknowledged
// in until that sync succeeds.
func TestAFileInADirectoryAnotherPathMadeWaitsForItsSync(t *testing.T) {
	for _, below := range []string{"audit", filepath.Join("made", "audit")} {
		t.Run(below, func(t *testing.T) {
			parent := t.TempDir()
			base := filepath.Join(parent, below)
			s, ds := dirSyncSink(t, filepath.Join(base, "{session_id}.jsonl"), FsyncBatch, nil, 1)
			ds.failWhen(func(dir string) bool { return dir == parent })
			ctx := context.Background()
			require.ErrorIs(t, s.WriteBatch(ctx, testSession, numberedLines(0, 0)), unix.EIO)
			const other = "0e4a2a7c-3b1f-4c55-9d0e-7f6b5a4c3d2e"
			// other takes the only cache slot.
			require.ErrorIs(t, s.WriteBatch(ctx, other, numberedLines(0, 0)), unix.EIO,
				"the entry of the directory holding the file is not durable")
			require.ErrorIs(t, s.WriteBatch(ctx, testSession, numberedLines(0, 0)), unix.EIO,
				"nor after an eviction")
			requireNotAckedUntilSynced(t, s, ds, other, filepath.Join(base, other+".jsonl"), parent)
		})
	}
}
