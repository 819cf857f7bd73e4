package integrity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A file named as a closed segment, put in the directory of a log not
// started yet (no sidecars), was sealed at start as the new log's first
// segment: forged lines signed as the log's, and retention later signed
// them away as its own.
func TestPlantedSegmentIsNotSealedIntoANewLog(t *testing.T) {
	k, _ := testKeys(t, "test")
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	planted := filepath.Join(dir, "events-20200101T000000Z-000001.jsonl")
	require.NoError(t, os.WriteFile(planted, []byte(lines(1000, 1001)), 0o600))
	sealer := newSealer(t, k)
	err := sealer.SealAtStart(bg, path)
	_, seg, ok := filesink.ParseSegment(planted)
	require.True(t, ok)
	require.False(t, sealer.Holds(path, seg), "the planted file was sealed as the log's (SealAtStart = %v)", err)
}
