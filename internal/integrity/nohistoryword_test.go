package integrity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Closed segments left without their sidecars and without the active
// file were refused with "the audit file holds lines but has no signed
// history": the audit file is missing; its closed segments hold the
// lines.
func TestNoHistoryOfClosedSegmentsNamesThem(t *testing.T) {
	k, _ := testKeys(t, "test")
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	seg := filepath.Join(dir, "events-20200101T000000Z-000001.jsonl")
	require.NoError(t, os.WriteFile(seg, []byte(lines(0, 3)), 0o600))
	err := newSealer(t, k).SealAtStart(bg, path)
	require.ErrorIs(t, err, ErrNoHistory)
	require.NotContains(t, err.Error(), "the audit file holds lines")
	require.ErrorContains(t, err, "has no signed history")
	require.ErrorContains(t, err, "the audit file is missing or empty, 1 closed segment")
}
