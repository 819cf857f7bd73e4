package trail

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A compressed segment cut short (a disk that filled, a copy that stopped)
// is reported as such, like a bad line, and the other sources are still
// read: one damaged segment must not hide the rest of a trail from an
// investigator.
func TestADamagedSegmentIsReportedAndTheRestRead(t *testing.T) {
	good, _ := writeTrail(t, 2, 40)
	_, content := writeTrail(t, 3, 400)
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	frame := enc.EncodeAll(content, nil)
	require.NoError(t, enc.Close())
	cut := filepath.Join(t.TempDir(), "events-20261206T061500Z-000001.jsonl.zst")
	require.NoError(t, os.WriteFile(cut, frame[:len(frame)/2], 0o600))

	type bad struct {
		source, reason string
	}
	var bads []bad
	opts := Options{Bad: func(source string, _ int64, reason string) { bads = append(bads, bad{source, reason}) }}
	_, st := readLines(t, []string{cut, good}, opts)
	assert.GreaterOrEqual(t, st.Ops, int64(40), "the good source's operations, and those read before the damage")
	require.Len(t, bads, 1)
	assert.Equal(t, cut, bads[0].source)
	assert.Contains(t, bads[0].reason, "the compressed segment cannot be read to its end")
	assert.Equal(t, int64(1), st.Bad)

	bads = nil
	_, sst, err := ReadSessions(context.Background(), []string{cut, good}, opts)
	require.NoError(t, err)
	assert.Len(t, bads, 1)
	assert.Equal(t, int64(1), sst.Bad)
}
