package integrity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A rotation racing a seal round (the segments sealed, the new file opened
// after one more rotation) left the sealer holding that new file as "the
// file sealed last" while the segment before it was not recorded yet. Once
// the new file rotated too, the sealer passed over the segment between them
// as foreign: its acknowledged lines stayed out of the log, and verify
// named the collector's own segment as foreign. Every segment the sink
// reports is the log's, however many rotations come between two rounds.
func TestOwnRotationsRacingASealAreAllRecorded(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	sealer := newSealer(t, k)
	// racing makes the next sync of a segment rotate the file once more.
	racing := false
	var rotate func()
	sealer.set.syncAudit = func(f *os.File) error {
		if racing && f.Name() != path {
			racing = false
			rotate()
		}
		return f.Sync()
	}
	sink := sealedSink(t, path, reportedRotation(sealer), sealer)
	n := 0
	// rotate writes a batch of more than 100 bytes: the sink rotates the
	// file before it, and the batch starts the next file.
	rotate = func() {
		t.Helper()
		require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(n, n+11))))
		n += 12
	}
	rotate()
	require.NoError(t, sealer.SealPending(bg))
	rotate()

	// The round seals the segment; while it syncs it, the sink rotates
	// again, so the file the round opens next comes after a segment the
	// round did not list.
	racing = true
	require.NoError(t, sealer.SealPending(bg))
	require.False(t, racing, "a segment was sealed")
	// Several rotations before the next round, the file opened last among
	// them.
	for range 3 {
		rotate()
	}
	require.NoError(t, sealer.SealPending(bg))
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))

	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Len(t, segs, 5)
	v, err := LoadVerifierKey(pub)
	require.NoError(t, err)
	sl, err := LoadSegmentLog(path, v)
	require.NoError(t, err)
	var recorded []string
	for _, rec := range sl.Segments {
		recorded = append(recorded, rec.Name)
	}
	for _, s := range segs {
		require.Contains(t, recorded, filepath.Base(s.Plain), "every segment the sink made is recorded")
	}
	tr, err := OpenTrail(path, v)
	require.NoError(t, err)
	require.Empty(t, tr.Problems)
	res := streamTrail(t, tr, v)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(n), res.Lines)
	require.Equal(t, int64(n), res.Sealed, "every acknowledged line is in the log")
}
