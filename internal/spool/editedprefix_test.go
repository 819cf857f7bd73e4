package spool

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// prefixEdits are edits of lines 1..4 of six (all the endpoint took)
// made in place: bytes removed from the acknowledged lines, the rest of
// the file shifted down. They give the bytes removed, by where they start
// and how many there are, given the length of a line.
var prefixEdits = map[string]func(n int64) (from, count int64){
	// The lines behind move by a whole line: the offset still falls on
	// a line boundary.
	"a line": func(n int64) (int64, int64) { return n, n },
	// They move by a line and a half: the offset falls inside a line.
	"a line and a half": func(n int64) (int64, int64) { return n, n + n/2 },
	// Every line delivered, as a clean-up of the file in place would:
	// the file is now shorter than the offset, but was not cut.
	"every line delivered": func(n int64) (int64, int64) { return 0, 4 * n },
}

// editedPrefixSpool spools lines 1..6, has lines 1..4 acknowledged and
// then applies edit. It returns the spool and the lines not yet
// acknowledged, which must all still be delivered.
func editedPrefixSpool(t *testing.T, path string, edit func(n int64) (int64, int64)) (*Spool, []byte) {
	t.Helper()
	s, _ := checkedSpool(t, path)
	ctx := context.Background()
	lines := eventLines(t, 1, 6)
	require.NoError(t, s.Append(ctx, lines))
	c := &collector{failAt: map[int]bool{2: true}}
	_, err := s.Replay(ctx, 4, 1<<20, c.send)
	require.ErrorIs(t, err, errSend)
	all := bytes.SplitAfter(lines, []byte{'\n'})
	require.Equal(t, bytes.Join(all[:4], nil), c.data.Bytes())
	from, count := edit(int64(len(all[0])))
	removeInPlace(t, path, from, count)
	return s, bytes.Join(all[4:], nil)
}

// removeInPlace cuts count bytes at from out of the file at path without
// replacing the file.
func removeInPlace(t *testing.T, path string, from, count int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b[from+count:], from)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(int64(len(b))-count))
	require.NoError(t, f.Close())
}

// replayDelivers replays s and checks that it delivers every line not
// acknowledged (pending), last.
func replayDelivers(t *testing.T, s *Spool, pending []byte) {
	t.Helper()
	c := &collector{}
	_, err := s.Replay(context.Background(), 10, 1<<20, c.send)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(c.data.Bytes(), pending), "every line not acknowledged is delivered:\n%s", c.data.Bytes())
}

// Lines the endpoint took, edited out of the running spool's file in
// place, move every line behind them below the acknowledged offset. The
// offset is then in doubt: replay resends from the first line rather
// than skip (or quarantine the rest of) a line never delivered.
func TestLinesEditedOutBeforeTheOffsetAreNotSkipped(t *testing.T) {
	for name, edit := range prefixEdits {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool.jsonl")
			s, pending := editedPrefixSpool(t, path, edit)
			replayDelivers(t, s, pending)
			require.Zero(t, s.Size())
		})
	}
}

// The same edits while the collector is stopped: the sidecar's offset no
// longer follows the lines it was saved after, and Open replays from the
// first line.
func TestLinesEditedOutWhileStoppedAreNotSkipped(t *testing.T) {
	for name, edit := range prefixEdits {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool.jsonl")
			s, pending := editedPrefixSpool(t, path, edit)
			require.NoError(t, s.Close())
			again, _ := checkedSpool(t, path)
			require.NotEmpty(t, again.Recovery().OffsetProblem)
			require.Zero(t, again.Recovery().ResumeOffset)
			replayDelivers(t, again, pending)
		})
	}
}

// Edits while a replay round is sending lines 5 and 6, with a push (line
// 7) spooled meanwhile: the append finds the file changed, and the
// batch's bytes no longer say where line 7 is. The round's
// acknowledgement must not move the offset past line 7, never sent.
var roundEdits = map[string]func(t *testing.T, path string, n int64){
	// Lines 1..4, delivered, cleaned out: the append moves the offset
	// back to the first line.
	"delivered lines removed": func(t *testing.T, path string, n int64) { removeInPlace(t, path, 0, 4*n) },
	// Line 6 cut off, above the offset: line 7 takes its place.
	"cut above the offset": func(t *testing.T, path string, n int64) { removeInPlace(t, path, 5*n, n) },
}

func TestLinesEditedDuringARoundAreNotSkipped(t *testing.T) {
	for name, edit := range roundEdits {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool.jsonl")
			s, pending := editedPrefixSpool(t, path, func(int64) (int64, int64) { return 0, 0 })
			ctx := context.Background()
			late := eventLines(t, 7, 7)
			c := &collector{}
			edited := false
			send := func(ctx context.Context, batch []byte, lines int) error {
				if !edited {
					edited = true
					edit(t, path, int64(len(pending)/2))
					require.NoError(t, s.Append(ctx, late))
				}
				return c.send(ctx, batch, lines)
			}
			_, err := s.Replay(ctx, 10, 1<<20, send)
			require.NoError(t, err)
			_, err = s.Replay(ctx, 10, 1<<20, c.send)
			require.NoError(t, err)
			require.True(t, bytes.HasSuffix(c.data.Bytes(), late), "the line spooled during the round is delivered:\n%s", c.data.Bytes())
			require.Zero(t, s.Size())
		})
	}
}
