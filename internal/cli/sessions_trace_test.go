package cli

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// tracedOp is an operation at seqs seq and seq+1 whose start and finish
// name traces start and finish ("": none).
func tracedOp(session uuid.UUID, span string, seq int64, start, finish string) (s, f auditevent.Event) {
	s, f = op(session, "exec", span, seq, seq+1)
	s.TraceID, f.TraceID = nil, nil
	if start != "" {
		s.TraceID = auditevent.Ptr(start)
	}
	if finish != "" {
		f.TraceID = auditevent.Ptr(finish)
	}
	return s, f
}

// A session's trace is that of its first operation, by seq, that names
// one, whatever the order of its lines: show, sessions (summing the lines
// as read, or reading the trail again) and serve name the same.
func TestASessionsTraceIsItsFirstOperationsWhateverTheLineOrder(t *testing.T) {
	// A: the first operation's finish, naming another trace, comes first.
	a1s, a1f := tracedOp(sessionA, "a000000000000001", 1, "aaaa", "bbbb")
	a2s, a2f := tracedOp(sessionA, "a000000000000002", 3, "cccc", "cccc")
	// B: the first operation's start names no trace, and comes last.
	b1s, b1f := tracedOp(sessionB, "b000000000000001", 1, "", "dddd")
	b2s, b2f := tracedOp(sessionB, "b000000000000002", 3, "eeee", "eeee")
	// C: its operations are read last first.
	c1s, c1f := tracedOp(sessionC, "c000000000000001", 1, "ffff", "ffff")
	c2s, c2f := tracedOp(sessionC, "c000000000000002", 3, "gggg", "gggg")
	// E: its first operation is a finish whose start is missing, read last.
	_, e1f := tracedOp(sessionE, "e000000000000001", 1, "", "hhhh")
	e2s, e2f := tracedOp(sessionE, "e000000000000002", 3, "iiii", "iiii")
	want := map[uuid.UUID]string{sessionA: "aaaa", sessionB: "dddd", sessionC: "ffff", sessionE: "hhhh"}
	lines := []auditevent.Event{a1f, b2s, a2s, c2s, e2s, b2f, a2f, b1f, c2f, a1s, e2f, c1s, b1s, c1f, e1f}
	inOrder := writeFile(t, "events.jsonl", canonLines(lines...))
	// A seq used twice in another session makes sessions read the trail again.
	d1, _ := op(sessionMissingID, "exec", "d000000000000001", 1, 2)
	d2, _ := op(sessionMissingID, "exec", "d000000000000002", 1, 2)
	again := writeFile(t, "events.jsonl", canonLines(append(lines, d1, d2)...))

	for _, p := range []string{inOrder, again} {
		r := run(t, "", "show", p)
		require.Equal(t, exitOK, r.code, r.stderr)
		for id, trace := range want {
			assert.Contains(t, r.stdout, "session "+id.String()+"  trace "+trace+"\n", p)
		}
		r = run(t, "", "sessions", p)
		require.Equal(t, exitOK, r.code, r.stderr)
		for id, trace := range want {
			assert.True(t, strings.HasSuffix(rowOf(t, r.stdout, id.String()), " "+trace+"\n"), "%s: %s", p, r.stdout)
		}
		r = run(t, "", "sessions", "--output", "jsonl", p)
		require.Equal(t, exitOK, r.code, r.stderr)
		for id, trace := range want {
			assert.Contains(t, rowOf(t, r.stdout, id.String()), `"trace_id":"`+trace+`"`, p)
		}
		hs := startView(t, webview.Config{Sources: []string{p}})
		_, _, list := get(t, hs.URL+"/")
		for id, trace := range want {
			_, _, page := get(t, hs.URL+"/session/"+id.String())
			assert.Contains(t, page, `trace <span class="mono">`+trace+`</span>`, p)
			assert.Contains(t, listRow(t, list, id), `<td class="mono">`+trace+" <span", p)
		}
	}
}

// listRow is the row of the session in serve's list of sessions.
func listRow(t *testing.T, page string, id uuid.UUID) string {
	t.Helper()
	for row := range strings.SplitSeq(page, "<tr") {
		if strings.Contains(row, ">"+id.String()+"</a>") {
			return row
		}
	}
	t.Fatalf("no row for %s in %q", id, page)
	return ""
}

var (
	// sessionMissingID is a session of its own, reusing a seq.
	sessionMissingID = uuid.MustParse("44444444-5555-4666-8777-888888888888")
	sessionE         = uuid.MustParse("55555555-6666-4777-8888-999999999999")
)
