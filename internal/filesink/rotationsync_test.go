package filesink

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestARotationWhoseDirectorySyncFailsFailsItsBatch: the rotation's one
// directory sync covers the rename and the new file it opened. When it
// fails, OnError is told of the segment, and the new file is synced again,
// as a first open of it would be; failing too, the batch fails rather than
// being acknowledged in a file a power loss may take.
func TestARotationWhoseDirectorySyncFailsFailsItsBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1})
	syncs := 0
	r.syncDir = func(string) error { syncs++; return unix.EIO }
	s, err := New(Options{Path: path, Fsync: FsyncBatch, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(0, 0)))
	require.ErrorIs(t, s.WriteBatch(ctx, testSession, numberedLines(1, 1)), unix.EIO)
	require.Equal(t, 2, syncs, "the rename's sync, then the new file's")
	require.Len(t, ev.errors(), 1, "the segment's durability is told once")
	require.NoError(t, s.Close())
	requireSeqs(t, path, 1)
}
