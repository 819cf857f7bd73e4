package spool

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// editedPrefixSpool spools lines 1..6, has lines 1..3 acknowledged and
// then removes line 2, delivered already, from the file in place (same
// inode, the bytes after it shifted down), as an editor that rewrites a
// file in place would. It returns the spool and the lines not yet
// acknowledged, which must all still be delivered.
func editedPrefixSpool(t *testing.T, path string) (*Spool, *damages, []byte) {
	t.Helper()
	s, d := checkedSpool(t, path)
	ctx := context.Background()
	lines := eventLines(t, 1, 6)
	require.NoError(t, s.Append(ctx, lines))
	c := &collector{failAt: map[int]bool{2: true}}
	_, err := s.Replay(ctx, 3, 1<<20, c.send)
	require.ErrorIs(t, err, errSend)
	all := bytes.SplitAfter(lines, []byte{'\n'})
	require.Equal(t, bytes.Join(all[:3], nil), c.data.Bytes())
	removeInPlace(t, path, all[1])
	return s, d, bytes.Join(all[3:], nil)
}

// removeInPlace cuts the bytes of line out of the file at path without
// replacing the file.
func removeInPlace(t *testing.T, path string, line []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	i := bytes.Index(b, line)
	require.GreaterOrEqual(t, i, 0)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b[i+len(line):], int64(i))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(int64(len(b)-len(line))))
	require.NoError(t, f.Close())
}

// A line the endpoint took, removed from the running spool's file in
// place, moves every line behind it below the acknowledged offset. The
// offset is then in doubt: replay resends from the first line rather than
// skip (or quarantine the rest of) a line never delivered.
func TestLinesEditedOutBeforeTheOffsetAreNotSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, d, pending := editedPrefixSpool(t, path)
	c := &collector{}
	_, err := s.Replay(context.Background(), 10, 1<<20, c.send)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(c.data.Bytes(), pending), "every line not acknowledged is delivered:\n%s", c.data.Bytes())
	require.NotContains(t, d.kinds(), DamageLine, "no whole line is taken for damage")
	require.Zero(t, s.Size())
}

// The same edit while the collector is stopped: the sidecar's offset no
// longer follows the lines it was saved after, and Open replays from the
// first line.
func TestLinesEditedOutWhileStoppedAreNotSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, _, pending := editedPrefixSpool(t, path)
	require.NoError(t, s.Close())
	again, d := checkedSpool(t, path)
	require.Contains(t, again.Recovery().OffsetProblem, "changed")
	c := &collector{}
	_, err := again.Replay(context.Background(), 10, 1<<20, c.send)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(c.data.Bytes(), pending), "every line not acknowledged is delivered:\n%s", c.data.Bytes())
	require.Empty(t, d.kinds())
}
