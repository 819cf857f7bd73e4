package trail

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// An event line without its newline followed by the same line whole holds
// the event twice: the copy is a duplicate, counted in InLine too, as
// repeated lines are not. So for a finish paired with its start and one
// alone (its start not in the trail).
func TestACopyOnTheLineOfItsEventIsCountedInLine(t *testing.T) {
	s1, f1, _, f2 := twoOps("inline")
	twice := func(e auditevent.Event) string { return strings.TrimSuffix(eventLine(e), "\n") + eventLine(e) }
	for name, c := range map[string]struct {
		content string
		want    Stats
	}{
		"paired":              {eventLine(s1) + twice(f1), Stats{Sources: 1, Lines: 2, Ops: 1, Duplicates: 1, InLine: 1, Joined: 1}},
		"alone":               {twice(f2), Stats{Sources: 1, Lines: 1, Ops: 1, Duplicates: 1, InLine: 1, Joined: 1}},
		"and a repeated line": {eventLine(s1) + twice(f1) + eventLine(f1), Stats{Sources: 1, Lines: 3, Ops: 1, Duplicates: 2, InLine: 1, Joined: 1}},
		"a repeated line":     {eventLine(s1) + eventLine(f1) + eventLine(f1), Stats{Sources: 1, Lines: 3, Ops: 1, Duplicates: 1}},
	} {
		p := writeFile(t, t.TempDir(), "events.jsonl", []byte(c.content))
		var kinds []Piece
		opts := Options{Joined: func(_ string, _ int64, _ int, kind Piece) { kinds = append(kinds, kind) }}
		st, err := ReadOps(context.Background(), []string{p}, opts, func(*Op) error { return nil })
		require.NoError(t, err, name)
		assert.Equal(t, c.want, st, name)
		if c.want.InLine > 0 {
			assert.Equal(t, []Piece{PieceRepeated}, kinds, name)
		}

		_, st, err = ReadSessions(context.Background(), []string{p}, Options{})
		require.NoError(t, err, name)
		assert.Equal(t, c.want.InLine, st.InLine, name)
		assert.Equal(t, c.want.Duplicates, st.Duplicates, name)
	}
}
