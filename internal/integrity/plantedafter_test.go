package integrity

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A file named as the segment after the newest one, put beside the log
// between a rotation and the sealer's next round, was recorded as one of
// the log's segments: its forged lines were signed, and verify passed
// them. Only the segments the file sink reports making are the log's.
func TestPlantedNextSegmentIsNotSealed(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	sealer := newSealer(t, k)
	sink := sealedSink(t, path, reportedRotation(sealer), sealer)
	writeSealed(t, sink, sealer, 0, 40)
	segs, _ := writeUntilRotated(t, sink, path, 40)
	planted := plantNextSegment(t, segs[len(segs)-1])
	require.NoError(t, sealer.SealPending(bg))
	_, seg, ok := filesink.ParseSegment(planted)
	require.True(t, ok)
	require.False(t, sealer.Holds(path, seg), "the planted file was recorded as the log's")
	writeSealed(t, sink, sealer, 400, 440)
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))
}
