package filesink

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// TestARotationWhoseDirectorySyncFailsFailsItsBatch: the rotation's one
// directory sync covers the rename and the new file it opened. When it
// fails, OnError is told of the segment, and the directory is synced again
// before the batch is acknowledged in the new file; failing too, the batch
// fails rather than being acknowledged in a file a power loss may take.
func TestARotationWhoseDirectorySyncFailsFailsItsBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1})
	syncs, fail := 0, false
	syncDir := func(dir string) error {
		syncs++
		if fail {
			return unix.EIO
		}
		return fsutil.SyncDir(dir)
	}
	s, err := New(Options{Path: path, Fsync: FsyncBatch, Rotation: r, syncDirFn: syncDir})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(0, 0)))
	syncs, fail = 0, true
	require.ErrorIs(t, s.WriteBatch(ctx, testSession, numberedLines(1, 1)), unix.EIO)
	require.Equal(t, 2, syncs, "the rename's sync, then the new file's")
	require.Len(t, ev.errors(), 1, "the segment's durability is told once")
	require.NoError(t, s.Close())
	requireSeqs(t, path, 1)
}
