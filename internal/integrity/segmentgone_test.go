package integrity

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A segment the sink made, removed before the sealer read any of its
// lines, left no trace: the new file's lines followed the segment before
// it, and the acknowledged lines were gone from a log that verified. The
// sealer refuses the log when a reported segment is gone unrecorded.
func TestSegmentRemovedBeforeItsSealIsRefused(t *testing.T) {
	for _, symlink := range []bool{false, true} {
		t.Run(map[bool]string{false: "removed", true: "a symlink in its place"}[symlink], func(t *testing.T) {
			segmentRemovedBeforeItsSeal(t, symlink)
		})
	}
}

func segmentRemovedBeforeItsSeal(t *testing.T, symlink bool) {
	k, _ := testKeys(t, "test")
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	sealer := newSealer(t, k)
	sink := sealedSink(t, path, reportedRotation(sealer), sealer)
	writeSealed(t, sink, sealer, 0, 8)
	// Two rotations without a seal: the second segment holds no line the
	// sealer read.
	var segs []filesink.Segment
	for i := 8; len(segs) < 2 && i < 800; i += 4 {
		require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(i, i+3))))
		var err error
		segs, err = filesink.Segments(path)
		require.NoError(t, err)
	}
	require.Len(t, segs, 2)
	require.NoError(t, os.Remove(segs[1].Path))
	if symlink {
		require.NoError(t, os.Symlink(segs[0].Path, segs[1].Path))
	}
	require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(900, 903))))
	err := sealer.SealPending(bg)
	require.True(t, errors.Is(err, ErrTampered) && strings.Contains(err.Error(), "is gone before it was sealed"), "SealPending = %v", err)
	require.NoError(t, sink.Close())
}
