package spool

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An offset the sidecar cannot take (a full disk; here its temporary name
// is a directory) does not hold the spool back: the delivered batches stay
// acknowledged, the next round sends only new lines, the file is trimmed,
// and Upkeep says why until a write catches the sidecar up.
func TestDeliveredLinesStayAcknowledgedWhenTheOffsetCannotBeSaved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s := openSpool(t, Options{Path: path})
	ctx := context.Background()
	first := makeLines(0, 30, 20)
	require.NoError(t, s.Append(ctx, first))
	require.NoError(t, os.Mkdir(path+".offset.tmp", 0o700))

	c := &collector{}
	sent, err := s.Replay(ctx, 10, 1<<20, c.send)
	require.NoError(t, err, "the endpoint took every batch")
	assert.Equal(t, 30, sent)
	assert.False(t, s.Pending())
	assert.ErrorContains(t, s.Upkeep(), "offset.tmp")

	second := makeLines(30, 10, 20)
	require.NoError(t, s.Append(ctx, second))
	sent, err = s.Replay(ctx, 10, 1<<20, c.send)
	require.NoError(t, err)
	assert.Equal(t, 10, sent)
	assert.Equal(t, string(first)+string(second), c.data.String(), "nothing sent twice")

	require.NoError(t, os.Remove(path+".offset.tmp"))
	require.NoError(t, s.Append(ctx, makeLines(40, 1, 20)))
	_, err = s.Replay(ctx, 10, 1<<20, c.send)
	require.NoError(t, err)
	assert.NoError(t, s.Upkeep(), "caught up")
	assert.Zero(t, fileSize(t, path), "trimmed")
}

// Behind, the saved offset is what a restart resends from: lines the
// endpoint had may come again (at-least-once), none is lost.
func TestRestartWithTheOffsetBehindResendsAndLosesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: path})
	require.NoError(t, err)
	all := makeLines(0, 30, 20)
	require.NoError(t, s.Append(ctx, all))
	c := &collector{failAt: map[int]bool{2: true}}
	_, err = s.Replay(ctx, 10, 1<<20, c.send) // batch 1 saved
	require.ErrorIs(t, err, errSend)
	require.NoError(t, os.Mkdir(path+".offset.tmp", 0o700))
	_, err = s.Replay(ctx, 10, 1<<20, (&collector{failAt: map[int]bool{2: true}}).send) // batch 2 delivered, not saved
	require.ErrorIs(t, err, errSend)
	require.Error(t, s.Upkeep())
	require.NoError(t, s.Close())
	require.NoError(t, os.Remove(path+".offset.tmp"))

	s = openSpool(t, Options{Path: path})
	again := &collector{}
	sent, err := s.Replay(ctx, 10, 1<<20, again.send)
	require.NoError(t, err)
	assert.Equal(t, 20, sent, "from the saved offset: batch 2 again, then batch 3")
	assert.Equal(t, string(all[c.data.Len():]), again.data.String())
}
