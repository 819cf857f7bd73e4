package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// An operation whose start and finish name different traces is under
// its start's, the first its lines carry: show names that trace, and
// sessions gives the session that trace whether it sums the lines as
// read or reads the trail again (a reused seq in another session makes it).
func TestAnOperationsTraceIsItsStarts(t *testing.T) {
	s, f := op(sessionA, "exec", "00f067aa0ba902b7", 1, 2)
	s.TraceID, f.TraceID = auditevent.Ptr("aaaa"), auditevent.Ptr("bbbb")
	b1, _ := op(sessionB, "exec", "b000000000000001", 1, 2)
	b2, _ := op(sessionB, "exec", "b000000000000002", 1, 2) // seq 1 again
	alone := writeFile(t, "events.jsonl", canonLines(s, f))
	reused := writeFile(t, "events.jsonl", canonLines(s, f, b1, b2))

	r := run(t, "", "show", alone)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "session "+sessionA.String()+"  trace aaaa\n")
	r = run(t, "", "show", "--output", "json", alone)
	assert.Contains(t, r.stdout, `"trace_id":"aaaa"`)
	for _, p := range []string{alone, reused} {
		r = run(t, "", "sessions", "--output", "jsonl", p)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, rowOf(t, r.stdout, sessionA.String()), `"trace_id":"aaaa"`, p)
	}
	hs := startView(t, webview.Config{Sources: []string{alone}})
	_, _, body := get(t, hs.URL+"/session/"+sessionA.String()+"/op/0")
	assert.True(t, strings.Contains(body, `<tr><th>Trace</th><td class="mono">aaaa</td></tr>`), body)
}
