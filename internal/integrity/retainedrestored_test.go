package integrity

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A segment retention removed, put back from a backup (to read it beside
// the trail), verifies; the gap after it is the segments retention removed,
// not lines missing. A segment removed by hand in that gap still fails.
func TestRetainedTrailWithARestoredSegment(t *testing.T) {
	path, pub, k := rotatedTrail(t, 200, true, 0)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Greater(t, len(segs), 5)
	kept := readZstdFile(t, segs[0].Path)

	retireSegments(t, k, path, segs[:3]...)
	writeZstdFile(t, segs[0].Path, kept)

	res := checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(200), res.Sealed)

	require.NoError(t, os.Remove(segs[3].Path))
	res = checkTrail(t, path, pub)
	require.Contains(t, strings.Join(res.Failures, "\n"), "no retention record says it was removed")
}

// retireSegments removes segs of the trail at path as retention does: a
// sealer of k signs each one's retention record, then the file goes.
func retireSegments(t *testing.T, k *Keys, path string, segs ...filesink.Segment) {
	t.Helper()
	s := newSealer(t, k)
	for _, seg := range segs {
		require.NoError(t, s.Retire(path, seg))
		require.NoError(t, os.Remove(seg.Path))
	}
	require.NoError(t, s.Close(bg))
}

// Retention removes the oldest segments first: a segment after kept ones,
// removed with a retention record, is a gap verify reports.
func TestRetentionRecordOutOfOrderIsAGap(t *testing.T) {
	path, pub, k := rotatedTrail(t, 200, true, 0)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Greater(t, len(segs), 5)

	retireSegments(t, k, path, segs[2])

	res := checkTrail(t, path, pub)
	require.Contains(t, strings.Join(res.Failures, "\n"), "are missing")
}

// Retention may remove every closed segment (by age): one put back then
// comes before the active file, whose lines start where the records end.
func TestRetainedTrailWithOnlyARestoredSegment(t *testing.T) {
	path, pub, k := rotatedTrail(t, 200, true, 0)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Greater(t, len(segs), 2)
	kept := readZstdFile(t, segs[0].Path)

	retireSegments(t, k, path, segs...)
	res := checkTrail(t, path, pub)
	require.Empty(t, res.Failures, "every segment retired")

	writeZstdFile(t, segs[0].Path, kept)
	res = checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(200), res.Sealed)
}
