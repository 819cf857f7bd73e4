package trail

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// A line that is a torn piece followed by a whole event line is read as
// that event, the line unchanged, and reported to Options.Joined; the
// last line of a live file so made is read too, not left out as
// incomplete, as a whole event without its newline is.
func TestTheWholeLineAfterATornPieceIsRead(t *testing.T) {
	s1, f1, s2, f2 := twoOps("torn")
	piece := eventLine(s2)[:70]
	for name, c := range map[string]struct {
		content, last string
		joinedAt      int64
	}{
		"mid-file":            {eventLine(s1) + piece + eventLine(f1) + eventLine(s2) + eventLine(f2), eventLine(f1), 2},
		"live file last line": {eventLine(s1) + eventLine(s2) + eventLine(f2) + piece + eventLine(f1)[:len(eventLine(f1))-1], eventLine(f1)[:len(eventLine(f1))-1], 4},
	} {
		p := writeFile(t, t.TempDir(), "events.jsonl", []byte(c.content))
		var joined []int64
		opts := Options{KeepLines: true, Joined: func(source string, n int64, pieceBytes int, kind Piece) {
			assert.Equal(t, p, source)
			assert.Equal(t, len(piece), pieceBytes)
			assert.Equal(t, PieceTorn, kind)
			joined = append(joined, n)
		}}
		var lines []string
		st, err := ReadOps(context.Background(), []string{p}, opts, func(o *Op) error {
			lines = append(lines, string(o.Start.Line), string(o.Finish.Line))
			return nil
		})
		require.NoError(t, err, name)
		assert.Equal(t, []int64{c.joinedAt}, joined, name)
		assert.Equal(t, Stats{Sources: 1, Lines: 4, Ops: 2, Joined: 1}, st, name)
		assert.Equal(t, []string{eventLine(s1), c.last, eventLine(s2), eventLine(f2)}, lines, name)

		joined = nil
		list, st, err := ReadSessions(context.Background(), []string{p}, opts)
		require.NoError(t, err, name)
		assert.Equal(t, []int64{c.joinedAt}, joined, name)
		assert.Equal(t, int64(1), st.Joined, name)
		require.Len(t, list, 1)
		assert.Equal(t, int64(4), list[0].Events, name)
		assert.Zero(t, list[0].Missing, name)
		assert.Zero(t, list[0].Open, name)
	}
}

// A line that is a whole event line without its newline (its writer
// killed before it) followed by another whole event line holds two
// events: both are read, the first line unchanged but for the newline it
// never had, and the line is reported to Options.Joined once, counted as
// one line. A filter picks either event alone.
func TestAnEventLineWithoutItsNewlineIsReadBeforeTheLineAfterIt(t *testing.T) {
	s1, f1, s2, f2 := twoOps("unended")
	unended := strings.TrimSuffix(eventLine(s2), "\n")
	for name, c := range map[string]struct {
		content, last string
		joinedAt      int64
	}{
		"mid-file":            {eventLine(s1) + unended + eventLine(f1) + eventLine(f2), eventLine(f1), 2},
		"live file last line": {eventLine(s1) + eventLine(f2) + unended + eventLine(f1)[:len(eventLine(f1))-1], eventLine(f1)[:len(eventLine(f1))-1], 3},
	} {
		p := writeFile(t, t.TempDir(), "events.jsonl", []byte(c.content))
		var joined []int64
		opts := Options{KeepLines: true, Joined: func(source string, n int64, pieceBytes int, kind Piece) {
			assert.Equal(t, p, source)
			assert.Equal(t, len(unended), pieceBytes)
			assert.Equal(t, PieceEvent, kind)
			joined = append(joined, n)
		}}
		lines := map[string]bool{}
		st, err := ReadOps(context.Background(), []string{p}, opts, func(o *Op) error {
			for _, e := range []*Event{o.Start, o.Finish} {
				if e != nil {
					lines[string(e.Line)] = true
				}
			}
			return nil
		})
		require.NoError(t, err, name)
		assert.Equal(t, []int64{c.joinedAt}, joined, name)
		assert.Equal(t, Stats{Sources: 1, Lines: 3, Ops: 2, Joined: 1}, st, name)
		assert.Equal(t, map[string]bool{eventLine(s1): true, c.last: true, unended: true, eventLine(f2): true}, lines, name)

		joined = nil
		list, st, err := ReadSessions(context.Background(), []string{p}, opts)
		require.NoError(t, err, name)
		assert.Equal(t, []int64{c.joinedAt}, joined, name)
		assert.Equal(t, int64(1), st.Joined, name)
		assert.Equal(t, int64(3), st.Lines, name)
		require.Len(t, list, 1)
		assert.Equal(t, int64(4), list[0].Events, name)
		assert.Zero(t, list[0].Missing, name)
		assert.Zero(t, list[0].Open, name)

		for _, want := range []auditevent.Event{s1, s2} {
			opts.Filter = Filter{SpanID: want.SpanID}
			var got []*Op
			_, err := ReadOps(context.Background(), []string{p}, opts, func(o *Op) error {
				got = append(got, o)
				return nil
			})
			require.NoError(t, err, name)
			require.Len(t, got, 1, name)
			assert.Equal(t, want.SpanID, got[0].SpanID, name)
			assert.False(t, got[0].Open(), name)
		}
	}
}
