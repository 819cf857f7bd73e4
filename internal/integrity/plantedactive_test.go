package integrity

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A file named as the segment after the one the sink had just rotated,
// put beside the log before the sealer's round, kept the sealer from
// sealing the active file from then on: each round took the planted file
// for a rotation not sealed yet, let the active file go, and found it new
// again the next round. The lines acknowledged after it stayed unsealed.
func TestPlantedNextSegmentLeavesTheActiveFileSealed(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	sealer := newSealer(t, k)
	sink := sealedSink(t, path, reportedRotation(sealer), sealer)
	writeSealed(t, sink, sealer, 0, 40)
	segs, n := writeUntilRotated(t, sink, path, 40)
	plantNextSegment(t, segs[len(segs)-1])
	require.NoError(t, sealer.SealPending(bg))
	require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(n, n))))
	n++
	require.NoError(t, sealer.SealPending(bg))
	require.NoError(t, sealer.SealPending(bg))
	require.Equal(t, int64(n), sealer.logs[path].last.N, "every acknowledged line is sealed")
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))
}
