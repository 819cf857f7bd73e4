package filesink

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCompressedSegmentOfAnExtensionlessPath: the compressed segments of
// an audit file named without an extension end in .zst alone. Read from
// their names only (ParseSegment, SegmentGroups: verify's and prove's
// listing), they belong to that file, as Segments, which knows the path,
// lists them: not to a plain log at PATH.zst.
func TestCompressedSegmentOfAnExtensionlessPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit")
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for seq := range int64(2) {
		plain := namerFor(path).name(t0, seq+1)
		require.NoError(t, os.WriteFile(plain, numberedLines(1, 2), 0o600))
	}
	m := &maintainer{rot: &Rotation{Compress: true, now: func() time.Time { return t0.Add(time.Hour) }}, marks: newOwnMarks()}
	m.maintain(context.Background(), path, newListings(nil))
	want, err := Segments(path)
	require.NoError(t, err)
	require.Len(t, want, 2)

	groups, err := ListSegments(filepath.Dir(path))
	require.NoError(t, err)
	require.Equal(t, want, groups.Of(path))
	for _, seg := range want {
		require.True(t, seg.Compressed, seg.Path)
		active, got, ok := ParseSegment(seg.Path)
		require.True(t, ok, seg.Path)
		require.Equal(t, path, active, seg.Path)
		require.Equal(t, seg, got)
	}
}
