package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// A session whose operations belong to several traces (one per agent
// run, say) names each trace above its operations, not only the first
// one in the session's heading: a row is never shown under a trace it is
// not part of. The web view says the session's trace is only its first.
func TestShowTableNamesEachTraceOfASession(t *testing.T) {
	var lines string
	traces := []string{"11111111111111111111111111111111", "11111111111111111111111111111111", "22222222222222222222222222222222", ""}
	for k, tr := range traces {
		s, f := op(sessionA, "exec", "span-"+string(rune('a'+k)), int64(2*k+1), int64(2*k+2))
		s.Data = auditevent.MustParseData(`{"command":["cmd` + string(rune('a'+k)) + `"]}`)
		s.TraceID, f.TraceID = auditevent.Ptr(tr), auditevent.Ptr(tr)
		if tr == "" {
			s.TraceID, f.TraceID = nil, nil
		}
		lines += canonLines(s, f)
	}
	p := writeFile(t, "events.jsonl", lines)
	r := run(t, "", "show", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	var under []string // each row's command with the trace it is shown under
	trace := ""
	for _, l := range strings.Split(r.stdout, "\n") {
		if i := strings.Index(l, "trace "); i >= 0 && !strings.Contains(l, " exec ") {
			trace = strings.TrimSpace(l[i+len("trace "):])
		}
		if strings.HasPrefix(strings.TrimSpace(l), "no trace") {
			trace = ""
		}
		if i := strings.Index(l, " cmd"); i >= 0 {
			under = append(under, l[i+1:i+5]+"@"+trace)
		}
	}
	assert.Equal(t, []string{"cmda@" + traces[0], "cmdb@" + traces[1], "cmdc@" + traces[2], "cmdd@"}, under, r.stdout)

	hs := startView(t, webview.Config{Sources: []string{p}})
	for _, path := range []string{"/", "/session/" + sessionA.String()} {
		code, _, body := get(t, hs.URL+path)
		require.Equal(t, 200, code, body)
		assert.Contains(t, body, "other traces", "%s names its first trace only as the first", path)
	}
}
