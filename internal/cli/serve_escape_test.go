package cli

import (
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// A command's text must not act on the page: a bidirectional override
// (U+202E) would show an investigator a command in another order, and
// terminal escapes reach whoever saves or pipes the page. The web view
// shows them as escapes, as show does in a terminal.
func TestServeShowsControlAndBidiCharactersAsEscapes(t *testing.T) {
	hs, pages := serveCommand(t, "span\u202e-1", `{"command":["cat","notes\u202etxt.sh","\u001b]0;title\u0007\u001b[2J"]}`)
	for _, path := range pages {
		code, _, body := get(t, hs.URL+path)
		require.Equal(t, http.StatusOK, code, path)
		assert.NotContains(t, body, "\u202e", path)
		assert.NotContains(t, body, "\x1b", path)
		assert.NotContains(t, body, "\x07", path)
		assert.Contains(t, body, `notes\u202etxt.sh`, path)
		assert.Contains(t, body, `\x1b]0;title\x07\x1b[2J`, path)
	}
	_, _, body := get(t, hs.URL+"/session/"+sessionA.String()+"/op/0")
	assert.Contains(t, body, `span\u202e-1`)
}

// A command holding the text of an escape is shown apart from one holding
// the character, and an invisible character (a zero-width space, a tag
// character) is shown, so two commands that look alike are told apart.
func TestServeShowsBackslashesAndInvisibleCharacters(t *testing.T) {
	hs, pages := serveCommand(t, "span-1", `{"command":["printf","\\x1b","\u001b","rm\u200b","-rf\udb40\udc41","\u00ad"]}`)
	for _, path := range pages {
		code, _, body := get(t, hs.URL+path)
		require.Equal(t, http.StatusOK, code, path)
		for _, r := range []string{"\u200b", "\U000e0041", "\u00ad", "\x1b"} {
			assert.NotContains(t, body, r, path)
		}
		assert.Contains(t, body, `\\x1b \x1b rm\u200b -rf\U000e0041 \u00ad`, path)
	}
}

// serveCommand serves one exec operation of sessionA, span spanID, whose
// data is data, and returns the server and the paths of the pages that
// show its command.
func serveCommand(t *testing.T, spanID, data string) (*httptest.Server, []string) {
	s, f := op(sessionA, "exec", spanID, 1, 2)
	s.Data = auditevent.MustParseData(data)
	f.Data = s.Data
	p := writeFile(t, "events.jsonl", canonLines(s, f))
	hs := startView(t, webview.Config{Sources: []string{p}})
	return hs, []string{"/session/" + sessionA.String(), "/session/" + sessionA.String() + "/op/0"}
}

// The session page's command cell is cut to 80 characters as shown, so a
// command of many escapes does not run past it, and the cut never splits
// an escape.
func TestServeCutsTheCommandCellAsShown(t *testing.T) {
	hs, pages := serveCommand(t, "span-1", `{"command":["printf","`+strings.Repeat(`\u001b`, 60)+`"]}`)
	_, _, body := get(t, hs.URL+pages[0])
	cell := regexp.MustCompile(`<td class="what mono"[^>]*>([^<]*)</td>`).FindStringSubmatch(body)
	require.NotNil(t, cell, "the session page has a command cell")
	assert.Equal(t, "printf "+strings.Repeat(`\x1b`, 18)+"…", cell[1])
}

// A source file's name is shown as the trail's fields are: a name holding
// a bidirectional override cannot reorder the page.
func TestServeShowsSourceNamesAsEscapes(t *testing.T) {
	s, f := op(sessionA, "exec", "span-1", 1, 2)
	p := writeFile(t, "events\u202elsonj.jsonl", canonLines(s, f))
	hs := startView(t, webview.Config{Sources: []string{p}})
	_, _, body := get(t, hs.URL+"/session/"+sessionA.String()+"/op/0")
	assert.NotContains(t, body, "\u202e")
	assert.Contains(t, body, `events\u202elsonj.jsonl`)
}

// A line in the trail need not be canonical: a writer may put a
// bidirectional override or a zero-width space in a JSON string as it is.
// The operation page shows such characters in the lines and the data as
// JSON escapes, so the text still reads as the same JSON, and a line with
// none is shown byte for byte.
func TestServeShowsTheLinesFormatCharactersAsEscapes(t *testing.T) {
	s, f := op(sessionA, "exec", "span-1", 1, 2)
	s.Data = auditevent.MustParseData(`{"command":["cat","notes\u202etxt.sh","rm\u200b","say \"hi\" \\ \u00e9"]}`)
	f.Data = auditevent.MustParseData(`{"command":["ls","a \"b\" \\ c"],"exit_code":0}`)
	canonStart, canonFinish := canonLines(s), canonLines(f)
	raw := strings.NewReplacer(`\u202e`, "\u202e", `\u200b`, "\u200b").Replace(canonStart)
	require.NotEqual(t, canonStart, raw)
	p := writeFile(t, "events.jsonl", raw+canonFinish)
	hs := startView(t, webview.Config{Sources: []string{p}})
	code, _, body := get(t, hs.URL+"/session/"+sessionA.String()+"/op/0")
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, body, "\u202e")
	assert.NotContains(t, body, "\u200b")

	pre := func(id string) string {
		m := regexp.MustCompile(`<pre class="line" id="` + id + `">([^<]*)</pre>`).FindStringSubmatch(body)
		require.NotNil(t, m, id)
		return html.UnescapeString(m[1])
	}
	start := pre("start-line")
	assert.Contains(t, start, `notes\u202etxt.sh`)
	assert.Contains(t, start, `rm\u200b`)
	var shown, written any
	require.NoError(t, json.Unmarshal([]byte(start), &shown), "the start line as shown is JSON")
	require.NoError(t, json.Unmarshal([]byte(raw), &written))
	assert.Equal(t, written, shown, "the start line as shown is the same JSON as the line")
	assert.Equal(t, strings.TrimSuffix(canonFinish, "\n"), pre("finish-line"), "a line with nothing to hide is shown as it is")

	data := regexp.MustCompile(`<pre class="data">([^<]*)</pre>`).FindAllStringSubmatch(body, -1)
	require.Len(t, data, 2)
	assert.Contains(t, html.UnescapeString(data[0][1]), `"notes\u202etxt.sh"`)
	assert.Contains(t, html.UnescapeString(data[0][1]), `"rm\u200b"`)
}

// The session list's integrity table names every source file: a name
// holding a bidirectional override or a terminal escape is shown as
// escapes there too.
func TestServeShowsSourceNamesAsEscapesInTheIntegrityTable(t *testing.T) {
	s, f := op(sessionA, "exec", "span-1", 1, 2)
	p := writeFile(t, "ev\u202elsonj.\x1b[1m.jsonl", canonLines(s, f))
	hs := startView(t, webview.Config{Sources: []string{p}})
	code, _, body := get(t, hs.URL+"/")
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, body, "\u202e")
	assert.NotContains(t, body, "\x1b")
	assert.Contains(t, body, `ev\u202elsonj.\x1b[1m.jsonl`)
}

// An id from the trail fills a slot of --trace-url, in its path or its
// query: it cannot add a query parameter, end the query or change the
// meaning of a character there ('+' is a space in a query).
func TestServeTraceLinkIDsCannotAddQueryParameters(t *testing.T) {
	s, f := op(sessionA, "exec", "s&uiFind=other+x;y", 1, 2)
	s.TraceID = auditevent.Ptr("t&x=1")
	f.TraceID = s.TraceID
	p := writeFile(t, "events.jsonl", canonLines(s, f))
	hs := startView(t, webview.Config{Sources: []string{p}, TraceURL: "http://127.0.0.1:16686/trace/{trace_id}?uiFind={span_id}"})
	_, _, body := get(t, hs.URL+"/session/"+sessionA.String()+"/op/0")
	m := regexp.MustCompile(`id="trace-link" href="([^"]*)"`).FindStringSubmatch(body)
	require.NotNil(t, m, "a trace link")
	u, err := url.Parse(html.UnescapeString(m[1]))
	require.NoError(t, err)
	assert.Equal(t, "/trace/t&x=1", u.Path)
	assert.Equal(t, url.Values{"uiFind": {"s&uiFind=other+x;y"}}, u.Query())
}

// An id of "." or ".." is a step in a URL's path, percent-encoded or not
// (a browser reads %2e as a dot): a link holding one would name another
// page of the tracing backend, so such an operation gets no link.
func TestServeTraceLinkIDsCannotStepUpTheTemplatesPath(t *testing.T) {
	for _, ids := range [][2]string{{"..", "00f067aa0ba902b7"}, {".", "00f067aa0ba902b7"}, {"4bf92f3577b34da6a3ce929d0e0e4736", ".."}} {
		s, f := op(sessionA, "exec", ids[1], 1, 2)
		s.TraceID, f.TraceID = auditevent.Ptr(ids[0]), auditevent.Ptr(ids[0])
		p := writeFile(t, "events.jsonl", canonLines(s, f))
		hs := startView(t, webview.Config{Sources: []string{p}, TraceURL: "http://127.0.0.1:16686/api/traces/{trace_id}/spans/{span_id}"})
		for _, page := range []string{"/", "/session/" + sessionA.String(), "/session/" + sessionA.String() + "/op/0"} {
			_, _, body := get(t, hs.URL+page)
			for _, m := range regexp.MustCompile(`href="(http[^"]*)"`).FindAllStringSubmatch(body, -1) {
				base, err := url.Parse("http://127.0.0.1:16686/")
				require.NoError(t, err)
				u, err := base.Parse(html.UnescapeString(m[1]))
				require.NoError(t, err)
				assert.Regexp(t, `^/api/traces/[^/]+/spans/[^/]*$`, u.Path, "%v %s: %s", ids, page, m[1])
			}
		}
	}
}
