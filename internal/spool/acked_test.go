package spool

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A send that delivers its batch in parts acknowledges each part as it is
// taken: the offset is saved at once, so a failure of a later part, or a
// crash (here: the spool closed and opened again), resends only the rest.
// An acknowledgement that does not end a line, or goes back, moves nothing.
func TestReplayAckedSavesEachPartAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: path})
	require.NoError(t, err)
	all := makeLines(0, 30, 20)
	require.NoError(t, s.Append(ctx, all))
	tenth := bytes.Index(all, makeLines(10, 1, 20)) // where line 10 starts
	sent, err := s.ReplayAcked(ctx, 100, 1<<20, func(_ context.Context, b []byte, _ int, ack func(int, int)) error {
		ack(tenth-1, 9) // mid-line: ignored
		ack(tenth, 10)
		ack(tenth/2, 5) // going back: ignored
		rec, found, err := readOffset(s.offsetPath)
		require.NoError(t, err)
		require.True(t, found)
		assert.Equal(t, int64(tenth), rec.Offset, "saved when acknowledged, before the send ends")
		return errSend
	})
	require.ErrorIs(t, err, errSend)
	assert.Equal(t, 10, sent)
	require.NoError(t, s.Close())

	s = openSpool(t, Options{Path: path})
	assert.Equal(t, Recovery{ResumeOffset: int64(tenth)}, s.Recovery())
	c := &collector{}
	_, err = s.Replay(ctx, 100, 1<<20, c.send)
	require.NoError(t, err)
	assert.Equal(t, string(all[tenth:]), c.data.String())
}
