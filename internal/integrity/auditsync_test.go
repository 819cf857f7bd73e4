package integrity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// TestAuditFileIsSyncedBeforeItsCheckpoint: a checkpoint must never cover
// lines a power cut could lose. The store and the checkpoints were synced,
// the audit file not: with fsync: never (or another writer's lines) a
// power cut left a file shorter than its signed log, which reads as lines
// removed, and a plain path then refused to start.
func TestAuditFileIsSyncedBeforeItsCheckpoint(t *testing.T) {
	k, _ := testKeys(t, "sync")
	path := auditPath(t)
	s := newSealer(t, k)
	var synced []int64 // the checkpoints sidecar's size at each sync of the audit file
	s.set.syncAudit = func(f *os.File) error {
		assert.Equal(t, path, f.Name())
		synced = append(synced, sizeOf(t, CheckpointsPath(path)))
		return f.Sync()
	}
	require.NoError(t, s.SealAtStart(bg, path))
	s.Watch(path)
	for round, n := range []int{3, 2} {
		before := sizeOf(t, CheckpointsPath(path))
		appendLocked(t, path, lines(1, n))
		s.Wrote(path, n)
		require.NoError(t, s.SealPending(bg))
		require.Len(t, synced, round+1, "the file is synced for each checkpoint")
		assert.Equal(t, before, synced[round], "before the checkpoint is appended")
		assert.Greater(t, sizeOf(t, CheckpointsPath(path)), before, "a checkpoint was appended")
	}
	require.NoError(t, s.SealPending(bg))
	assert.Len(t, synced, 2, "no sync without a checkpoint")
}

func sizeOf(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

// TestRotatedSegmentIsSyncedBeforeItsCheckpoint: a closed segment holding
// lines no seal has read yet is synced too before the checkpoint that
// covers them.
func TestRotatedSegmentIsSyncedBeforeItsCheckpoint(t *testing.T) {
	k, _ := testKeys(t, "sync")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	s := newSealer(t, k)
	var synced []string
	s.set.syncAudit = func(f *os.File) error {
		synced = append(synced, filepath.Base(f.Name()))
		return f.Sync()
	}
	sink := sealedSink(t, path, &filesink.Rotation{MaxBytes: 100}, s)
	// The file rotates before each batch that would take it past 100
	// bytes: the segments hold batches no seal has read.
	for i := 1; i <= 40; i += 4 {
		require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(i, i+3))))
	}
	require.NoError(t, s.SealPending(bg))
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	for _, seg := range segs {
		assert.Contains(t, synced, filepath.Base(seg.Plain))
	}
	require.NoError(t, sink.Close())
	require.NoError(t, s.Close(bg))
}
