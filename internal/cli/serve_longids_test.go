package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// A span id, trace id or exit code of megabytes (the receiver takes any
// string) is cut in the pages' fields, ending in …, as a long command is:
// a page stays near the 1 MiB its lines show, not a multiple of the
// line, and a link is not built from an id no tracing backend has.
func TestServeCutsLongIDsAndExitCode(t *testing.T) {
	const big = 300 << 10
	span, trace := strings.Repeat("s", big), strings.Repeat("t", big)
	s, f := op(sessionA, "exec", span, 1, 2)
	s.TraceID, f.TraceID = auditevent.Ptr(trace), auditevent.Ptr(trace)
	f.OK = false
	f.Data = auditevent.MustParseData(`{"exit_code":"` + strings.Repeat("e", big) + `"}`)
	p := writeFile(t, "events.jsonl", canonLines(s, f))
	hs := startView(t, webview.Config{Sources: []string{p}, TraceURL: "http://127.0.0.1:16686/trace/{trace_id}?uiFind={span_id}"})

	for _, page := range []string{"/", "/session/" + sessionA.String(), "/session/" + sessionA.String() + "/op/0"} {
		code, _, body := get(t, hs.URL+page)
		require.Equal(t, 200, code, page)
		// The op page holds the lines and the finish's data whole
		// (each under 1 MiB): six times 300 KiB (the ids twice in each
		// line, the exit code in the finish and its data); each field
		// cut to 1 KiB adds little.
		limit := 64 << 10
		if strings.Contains(page, "/op/") {
			limit = 6*big + 64<<10
		}
		assert.Less(t, len(body), limit, "%s: %d bytes", page, len(body))
		assert.Contains(t, body, strings.Repeat("t", 100)+"…", "%s: the trace id is cut visibly", page)
		assert.NotContains(t, body, "16686/trace/", "%s: no link from an id over 1 KiB", page)
	}
	_, _, body := get(t, hs.URL+"/session/"+sessionA.String()+"/op/0")
	assert.Contains(t, body, strings.Repeat("s", 100)+"…", "the span id is cut visibly")
	assert.Contains(t, body, strings.Repeat("e", 100)+"…", "the exit code is cut visibly")
}
