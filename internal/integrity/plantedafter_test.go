package integrity

import (
	"os"
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
	k, pub := testKeys(t, "test")
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	sealer := newSealer(t, k)
	rot := &filesink.Rotation{MaxBytes: 100, OnRotate: func(p, seg string) { sealer.Rotated(p, seg) }}
	sink := sealedSink(t, path, rot, sealer)
	writeSealed(t, sink, sealer, 0, 40)
	before, err := filesink.Segments(path)
	require.NoError(t, err)
	// Write without sealing until the sink rotates.
	segs := before
	for i := 40; len(segs) == len(before) && i < 400; i += 4 {
		require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(i, i+3))))
		segs, err = filesink.Segments(path)
		require.NoError(t, err)
	}
	require.Greater(t, len(segs), len(before), "the sink rotated")
	newest := segs[len(segs)-1]
	planted := filepath.Join(dir, "events-"+newest.Time.Format("20060102T150405Z")+"-"+fmtSeq(newest.Seq+1)+".jsonl")
	require.NoError(t, os.WriteFile(planted, []byte(lines(1000, 1001)), 0o600))
	require.NoError(t, sealer.SealPending(bg))
	_, seg, ok := filesink.ParseSegment(planted)
	require.True(t, ok)
	require.False(t, sealer.Holds(path, seg), "the planted file was recorded as the log's")
	writeSealed(t, sink, sealer, 400, 440)
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))
	_ = pub
}
