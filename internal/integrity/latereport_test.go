package integrity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A rotation's report that reaches the sealer after it recorded the
// segment (without flock nothing orders the two) stayed among the
// segments the sink made and the sealer had not recorded. Once retention
// removed that segment, the sealer refused the log as if a segment were
// deleted before its seal. A recorded segment's report is spent.
func TestLateRotationReportOfARecordedSegment(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	sealer := newSealer(t, k)
	sink := sealedSink(t, path, reportedRotation(sealer), sealer)
	writeSealed(t, sink, sealer, 0, 40)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	oldest := segs[0]
	require.True(t, sealer.Holds(path, oldest), "the segment is recorded")
	sealer.Rotated(path, oldest.Plain) // the late report
	require.NoError(t, sealer.Retire(path, oldest))
	require.NoError(t, os.Remove(oldest.Path))
	writeSealed(t, sink, sealer, 40, 80)
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))
}
