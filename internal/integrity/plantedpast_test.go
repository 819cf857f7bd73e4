package integrity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A file named as a segment dated in the past, put beside the audit file
// before its first rotation, was taken for the log's first closed segment:
// its lines did not match the store, and the log stopped being sealed. It
// is not the log's: the rotation renamed the file sealed last, and the
// sealer seals that one and leaves the planted file to verify.
func TestPlantedPastSegmentBeforeTheFirstRotation(t *testing.T) {
	k, pub := testKeys(t, "test")
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	planted := filepath.Join(dir, "events-20200101T000000Z-000001.jsonl")
	sealer := newSealer(t, k)
	rot := &filesink.Rotation{MaxBytes: 100, MaxBackups: 3, BeforeRemove: sealer.Retire, Holds: sealer.Holds}
	sink := sealedSink(t, path, rot, sealer)
	writeSealed(t, sink, sealer, 0, 4)
	require.NoError(t, os.WriteFile(planted, []byte(lines(1000, 1000)), 0o600))
	writeSealed(t, sink, sealer, 4, 40)
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))
	require.FileExists(t, planted)
	_, seg, ok := filesink.ParseSegment(planted)
	require.True(t, ok)
	require.False(t, sealer.Holds(path, seg), "the planted file is not one of the log's segments")
	_ = pub
}
