package cli

import (
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// hostileIDs are ids a hostile agent may write: C1 controls (CSI, OSC 52
// and its string terminator as U+009B, U+009D, U+009C, which some
// terminals obey in UTF-8), a bidirectional override, a zero-width space.
const (
	hostileSpan  = "sp\u009b2J\u202e\u200bx"
	hostileTrace = "\u009d52;c;cm0K\u009c\u202etrace"
)

// rawOnTerminal reports the first character of out that acts on a
// terminal or hides there: the JSON output must spell it as an escape.
func rawOnTerminal(out string) string {
	for _, r := range out {
		if r != '\n' && (r < 0x20 || r >= 0x7f && r <= 0x9f || r == '\u202e' || r == '\u200b') {
			return string(r)
		}
	}
	return ""
}

func hostileIDTrail(t *testing.T) string {
	t.Helper()
	s, f := op(sessionA, "exec", hostileSpan, 1, 2)
	s.TraceID, f.TraceID = auditevent.Ptr(hostileTrace), auditevent.Ptr(hostileTrace)
	return writeFile(t, "events.jsonl", canonLines(s, f))
}

func TestShowJSONEscapesHostileIDs(t *testing.T) {
	r := run(t, "", "show", "--output", "json", hostileIDTrail(t))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, rawOnTerminal(r.stdout), "raw control or invisible character in %q", r.stdout)
	var ops []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ops), "still JSON")
	require.Len(t, ops, 1)
	assert.Equal(t, hostileSpan, ops[0]["span_id"], "the same value")
	assert.Equal(t, hostileTrace, ops[0]["trace_id"])
}

func TestSessionsJSONLEscapesHostileTrace(t *testing.T) {
	r := run(t, "", "sessions", "--output", "jsonl", hostileIDTrail(t))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, rawOnTerminal(r.stdout), "raw control or invisible character in %q", r.stdout)
	var row sessionJSON
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &row), "still JSON")
	require.NotNil(t, row.TraceID)
	assert.Equal(t, hostileTrace, *row.TraceID, "the same value")
}

// A line not in canonical form (written by hand) may hold the characters
// raw: --output json still shows them as escapes of the same JSON.
func TestShowJSONEscapesRawLine(t *testing.T) {
	line := `{"version":1,"event_id":"2ac3b151-5ff2-5d73-8d15-ad030caba803","ts":"2026-03-14T15:09:26Z",` +
		`"session_id":"` + sessionA.String() + `","seq":1,"op":"exec","phase":"start","span_id":"s",` +
		`"parent_span_id":null,"trace_id":null,"data":{"command":"x` + hostileTrace + `"}}` + "\n"
	r := run(t, "", "show", "--output", "json", writeFile(t, "events.jsonl", line))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, rawOnTerminal(r.stdout), "raw control or invisible character in %q", r.stdout)
	var ops []struct {
		Start struct {
			Data struct{ Command string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ops), "still JSON")
	require.Len(t, ops, 1)
	assert.Equal(t, "x"+hostileTrace, ops[0].Start.Data.Command, "the same value")
}

// A trace id of kilobytes (the receiver takes any string) is cut in the
// table's session heading and trace line as in its cells, so it cannot
// flood the terminal and push earlier rows out of its scrollback.
func TestShowTableCutsALongTraceID(t *testing.T) {
	trace := strings.Repeat("t", 10000)
	s, f := op(sessionA, "exec", "span-a", 1, 2)
	s.TraceID, f.TraceID = auditevent.Ptr(trace), auditevent.Ptr(trace)
	s2, f2 := op(sessionA, "exec", "span-b", 3, 4)
	s2.TraceID, f2.TraceID = auditevent.Ptr(trace+"2"), auditevent.Ptr(trace+"2")
	r := run(t, "", "show", writeFile(t, "events.jsonl", canonLines(s, f, s2, f2)))
	require.Equal(t, exitOK, r.code, r.stderr)
	lines := strings.Split(r.stdout, "\n")
	for _, l := range lines {
		assert.LessOrEqual(t, len(l), 200, "a line of %d bytes: %.80q…", len(l), l)
	}
	assert.Contains(t, r.stdout, "session "+sessionA.String()+"  trace tttt", "the heading names the trace")
	assert.Contains(t, r.stdout, "  trace tttt", "the trace line too")
	assert.Equal(t, 2, strings.Count(r.stdout, "t…\n"), "both cut visibly")
}

// duration_ms is any finite number: one of 300 digits keeps the
// DURATION column to its width, in the exponent form that still reads
// as the value.
func TestShowTableKeepsAHugeDurationToItsColumn(t *testing.T) {
	for _, tc := range []struct {
		ms   float64
		want string
	}{{1e300, "1.7e+295m"}, {-1e300, "-1e+300ms"}, {-1.7e300, "-2e+300ms"}, {1.7976931348623157e308, "3e+303m"}, {90_000, "1.5m"}, {-5, "-5.0ms"}} {
		s, f := op(sessionA, "exec", "span-1", 1, 2)
		f.DurationMS = tc.ms
		r := run(t, "", "show", writeFile(t, "events.jsonl", canonLines(s, f)))
		require.Equal(t, exitOK, r.code, r.stderr)
		lines := strings.Split(r.stdout, "\n")
		require.Greater(t, len(lines), 2, r.stdout)
		assert.True(t, strings.HasSuffix(lines[2], " "+tc.want), "%v: %q", tc.ms, lines[2])
		assert.LessOrEqual(t, len(lines[2]), len(lines[1]), "%v: the row is wider than the heading", tc.ms)
	}
}

// serve shows such a duration in the same short form.
func TestServeShowsAHugeDurationShort(t *testing.T) {
	s, f := op(sessionA, "exec", "span-1", 1, 2)
	f.DurationMS = 1e300
	hs := startView(t, webview.Config{Sources: []string{writeFile(t, "events.jsonl", canonLines(s, f))}})
	for _, page := range []string{"/session/" + sessionA.String(), "/session/" + sessionA.String() + "/op/0"} {
		_, _, body := get(t, hs.URL+page)
		assert.True(t, strings.Contains(html.UnescapeString(body), "1.7e+295 min"), page)
		assert.False(t, regexp.MustCompile(`[0-9]{20}`).MatchString(body), page)
	}
}

// A ts of year 9999 with a negative offset is in year 10000 (UTC): the
// timeline's axis names that year, not its last four digits.
func TestServeTimelineAxisPastYear9999(t *testing.T) {
	s, f := op(sessionA, "exec", "span-1", 1, 2)
	var err error
	f.TS, err = auditevent.ParseTimestamp("9999-12-31T23:59:59-23:59")
	require.NoError(t, err)
	hs := startView(t, webview.Config{Sources: []string{writeFile(t, "events.jsonl", canonLines(s, f))}})
	_, _, body := get(t, hs.URL+"/session/"+sessionA.String())
	assert.Contains(t, regexp.MustCompile(`Timeline of .*`).FindString(body), `to <span class="mono">10000-01-01T23:58:59Z</span>`)
}

// A command shows its escape character as \x1b, its tag characters as
// \U000e0041, while the line writes \u001b and a surrogate pair: --grep
// finds the text as the table shows it too.
func TestShowGrepFindsTextAsTheTableShowsIt(t *testing.T) {
	s, f := op(sessionA, "exec", "span-1", 1, 2)
	s.Data = auditevent.MustParseData(`{"command":"printf '\u001b]8;;http://x/\u001b\\' \udb40\udc41 \"q\""}`)
	other, otherF := op(sessionA, "exec", "span-2", 3, 4)
	p := writeFile(t, "events.jsonl", canonLines(s, f, other, otherF))
	r := run(t, "", "show", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, `printf '\x1b]8;;http://x/\x1b\\'`)
	for _, g := range []string{`\x1b]8;;http://x/\x1b\\'`, `\U000e0041 "q"`, "\x1b]8;;http", `\u001b]8`} {
		r = run(t, "", "show", "--output", "jsonl", "--grep", g, p)
		assert.Equal(t, canonLines(s, f), r.stdout, "--grep %q", g)
	}
}

// A session before 1970 (a negative Unix time) ends at its last event:
// its open operation runs to there, not to the epoch.
func TestServeTimelineOfASessionBefore1970(t *testing.T) {
	s, f := op(sessionA, "exec", "span-1", 1, 2)
	open, _ := op(sessionA, "exec", "span-2", 3, 4)
	var err error
	for _, e := range []struct {
		ev *auditevent.Event
		ts string
	}{{&s, "1960-01-01T00:00:00Z"}, {&f, "1960-01-01T00:00:01Z"}, {&open, "1960-01-01T00:00:02Z"}} {
		e.ev.TS, err = auditevent.ParseTimestamp(e.ts)
		require.NoError(t, err)
	}
	hs := startView(t, webview.Config{Sources: []string{writeFile(t, "events.jsonl", canonLines(s, f, open))}})
	_, _, body := get(t, hs.URL+"/session/"+sessionA.String())
	assert.Contains(t, regexp.MustCompile(`Timeline of .*`).FindString(body), `to <span class="mono">1960-01-01T00:00:02Z</span>`)
}

// An id holding characters shown as escapes is found by the text shown
// (verify's report, show's table), as --grep finds it, and as written.
func TestShowFindsHostileIDsByTheirShownForm(t *testing.T) {
	p := hostileIDTrail(t)
	for _, args := range [][]string{
		{"--span", displayText(hostileSpan)}, {"--span", hostileSpan},
		{"--trace", displayText(hostileTrace)}, {"--trace", hostileTrace},
	} {
		r := run(t, "", append(append([]string{"show", "--output", "jsonl"}, args...), p)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Equal(t, 2, strings.Count(r.stdout, "\n"), "%q finds the operation", args)
	}
	r := run(t, "", "show", "--output", "jsonl", "--span", displayText(hostileSpan)+"y", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, r.stdout)
}

// TEXT is read as the table shows a field only when the table shows
// some field so: a Windows path typed as is (C:\x64) finds that path, not
// the text its backslashes would spell as a Go literal (C:d).
func TestShowGrepReadsOnlyTheTablesEscapes(t *testing.T) {
	s, f := op(sessionA, "exec", "span-1", 1, 2)
	s.Data = auditevent.MustParseData(`{"command":"type C:\\x64\\notes.txt"}`)
	other, otherF := op(sessionA, "exec", "span-2", 3, 4)
	other.Data = auditevent.MustParseData(`{"command":"type C:d"}`)
	p := writeFile(t, "events.jsonl", canonLines(s, f, other, otherF))
	for _, g := range []string{`C:\x64`, `C:\\x64`} {
		r := run(t, "", "show", "--output", "jsonl", "--grep", g, p)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Equal(t, canonLines(s, f), r.stdout, "--grep %q", g)
	}
}
