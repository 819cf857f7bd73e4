package integrity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A file named as the segment after the one the sink had just rotated,
// put beside the log before the sealer's round, kept the sealer from
// sealing the active file from then on: each round took the planted file
// for a rotation not sealed yet, let the active file go, and found it new
// again the next round. The lines acknowledged after it stayed unsealed.
func TestPlantedNextSegmentLeavesTheActiveFileSealed(t *testing.T) {
	k, _ := testKeys(t, "test")
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	sealer := newSealer(t, k)
	rot := &filesink.Rotation{MaxBytes: 100, OnRotate: func(p, seg string) { sealer.Rotated(p, seg) }}
	sink := sealedSink(t, path, rot, sealer)
	writeSealed(t, sink, sealer, 0, 40)
	before, err := filesink.Segments(path)
	require.NoError(t, err)
	// Write without sealing until the sink rotates.
	segs, n := before, 40
	for ; len(segs) == len(before) && n < 400; n += 4 {
		require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(n, n+3))))
		segs, err = filesink.Segments(path)
		require.NoError(t, err)
	}
	require.Greater(t, len(segs), len(before), "the sink rotated")
	newest := segs[len(segs)-1]
	planted := filepath.Join(dir, "events-"+newest.Time.Format("20060102T150405Z")+"-"+fmtSeq(newest.Seq+1)+".jsonl")
	require.NoError(t, os.WriteFile(planted, []byte(lines(1000, 1001)), 0o600))
	require.NoError(t, sealer.SealPending(bg))
	require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(n, n))))
	n++
	require.NoError(t, sealer.SealPending(bg))
	require.NoError(t, sealer.SealPending(bg))
	require.Equal(t, int64(n), sealer.logs[path].last.N, "every acknowledged line is sealed")
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))
}
