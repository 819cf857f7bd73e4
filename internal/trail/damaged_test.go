package trail

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"testing/iotest"

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
	frame := compress(t, content)
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

// compress is content as one zstd frame.
func compress(t *testing.T, content []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	frame := enc.EncodeAll(content, nil)
	require.NoError(t, enc.Close())
	return frame
}

// An I/O error under a compressed segment is the file's failure, not
// damage to the segment: it ends the read, named as it is, with the
// source's name.
func TestAReadErrorUnderACompressedSegmentIsNotDamage(t *testing.T) {
	_, content := writeTrail(t, 3, 400)
	frame := compress(t, content)
	var bads []string
	opts := Options{
		// A disk failing midway through a segment.
		Stdin: io.MultiReader(bytes.NewReader(frame[:len(frame)/2]), iotest.ErrReader(syscall.EIO)),
		Bad:   func(_ string, _ int64, reason string) { bads = append(bads, reason) },
	}
	_, err := ReadOps(context.Background(), []string{StdinName}, opts, func(*Op) error { return nil })
	require.ErrorIs(t, err, syscall.EIO)
	assert.Contains(t, err.Error(), StdinName+": ")
	assert.NotContains(t, err.Error(), "cut short or damaged")
	assert.Empty(t, bads)
}

// A segment whose bytes changed is damaged, like one cut short.
func TestACorruptedSegmentIsReportedAsDamaged(t *testing.T) {
	_, content := writeTrail(t, 3, 400)
	frame := compress(t, content)
	frame[len(frame)/2] ^= 0x5a
	bad := filepath.Join(t.TempDir(), "events-20261206T061500Z-000001.jsonl.zst")
	require.NoError(t, os.WriteFile(bad, frame, 0o600))
	var bads []string
	opts := Options{Bad: func(_ string, _ int64, reason string) { bads = append(bads, reason) }}
	_, err := ReadOps(context.Background(), []string{bad}, opts, func(*Op) error { return nil })
	require.NoError(t, err)
	require.Len(t, bads, 1)
	assert.Contains(t, bads[0], "the compressed segment cannot be read to its end")
}
