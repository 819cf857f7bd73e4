package integrity

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A file named as the segment after the newest one, put beside a stopped
// collector's log whose active file holds sealed lines, stopped the next
// start with "PATH: line 1 differs from the hash sealed for it": it named
// the active file, whose lines are intact, and sent the operator to the
// hash store. The refusal names the planted file.
func TestPlantedSegmentAtStartIsNamed(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	sealer := newSealer(t, k)
	sink := sealedSink(t, path, reportedRotation(sealer), sealer)
	writeSealed(t, sink, sealer, 0, 40)
	segs, n := writeUntilRotated(t, sink, path, 40)
	writeSealed(t, sink, sealer, n, n+4)
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))
	planted := plantNextSegment(t, segs[len(segs)-1])

	err := newSealer(t, k).SealAtStart(bg, path)
	require.ErrorIs(t, err, ErrTampered)
	require.ErrorContains(t, err, "line 1 of "+filepath.Base(planted))
	require.ErrorContains(t, err, "which no segment record names")
}
