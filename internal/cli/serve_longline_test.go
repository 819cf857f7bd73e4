package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// An operation's page shows a long line's beginning, says how long the
// line is and how to print it whole: the page, built in memory for each
// request and loaded by the browser, does not grow with the line (an exec
// output of many megabytes of quotes, which HTML escapes fivefold).
func TestServeOperationPageCutsALongLine(t *testing.T) {
	s, f := op(sessionA, "exec", "span-0", 1, 2)
	out := strings.Repeat(`"`, 4<<20)
	f.Stdout = &out
	f.Data = auditevent.MustParseData(`{"blob":"` + strings.Repeat(`\\`, 2<<20) + `\u00e9"}`)
	p := writeFile(t, "events.jsonl", canonLines(s, f))
	hs := startView(t, webview.Config{Sources: []string{p}})

	code, _, body := get(t, hs.URL+"/session/"+sessionA.String()+"/op/0")
	require.Equal(t, 200, code)
	assert.Less(t, len(body), 12<<20, "the page holds a 12 MiB line and 4 MiB of data whole")
	assert.Contains(t, body, `id="start-line"`, "a short line is shown")
	assert.Contains(t, body, `id="finish-line">{&#34;data&#34;:{&#34;blob&#34;:&#34;\\`, "the long line's beginning is shown")
	assert.Contains(t, body, "… cut: ")
	assert.Contains(t, body, "sandboxaudit show --session "+sessionA.String()+" --span &#39;span-0&#39; --output jsonl")
	assert.NotContains(t, body, `\u00`+"…", "a cut never splits an escape")
}
