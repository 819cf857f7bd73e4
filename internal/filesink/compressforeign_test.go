package filesink

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Compression replaced a file named as a segment that the log does not
// record, sorting before one it does (put there by someone), with a
// compressed copy, removing the file it did not make. Like retention, it
// leaves such a file alone.
func TestCompressionLeavesAForeignSegment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	n := namerFor(path)
	t0 := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	own1, foreign, own3 := n.name(t0, 1), n.name(t0, 2), n.name(t0, 3)
	for i, p := range []string{own1, foreign, own3} {
		require.NoError(t, os.WriteFile(p, numberedLines(i*10+1, i*10+10), 0o600))
		require.NoError(t, os.Chtimes(p, t0, t0))
	}
	holds := func(_ string, seg Segment) bool { return seg.Plain != foreign }
	s, err := New(Options{Path: path, Rotation: &Rotation{Compress: true, Holds: holds}})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(31, 31)))
	require.Eventually(t, func() bool {
		_, err1 := os.Lstat(own1)
		_, err3 := os.Lstat(own3)
		return os.IsNotExist(err1) && os.IsNotExist(err3)
	}, time.Minute, 5*time.Millisecond, "the log's segments are compressed")
	require.NoError(t, s.Close())
	require.FileExists(t, foreign, "compression removed a file the log does not record")
	require.NoFileExists(t, foreign+ZstdSuffix)
}

// TestCompressionWhoseTwinAnotherRemoved: two collectors on one path look
// after its segments; one's listing finds the other's compressed copy in
// place before that one removed the plain segment, and removes it as a
// twin. The compression is done, not a failure.
func TestCompressionWhoseTwinAnotherRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	t0 := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	seg := Segment{Plain: namerFor(path).name(t0, 1)}
	seg.Path = seg.Plain
	require.NoError(t, os.WriteFile(seg.Plain, numberedLines(1, 5), 0o600))
	require.NoError(t, os.Chtimes(seg.Plain, t0, t0))
	zc := &compressor{written: func(dst string) {
		same, err := SameAsCompressed(seg.Plain, dst)
		require.NoError(t, err)
		require.True(t, same)
		require.NoError(t, os.Remove(seg.Plain))
	}}
	wait, err := compressSegment(context.Background(), zc, seg, t0.Add(time.Hour), time.Second, nil)
	require.NoError(t, err)
	require.Zero(t, wait)
	segs, err := Segments(path)
	require.NoError(t, err)
	require.Len(t, segs, 1)
	require.True(t, segs[0].Compressed)
}
