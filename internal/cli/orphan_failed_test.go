package cli

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// A failed finish whose start is not in what was read (an earlier
// segment left out) is still a failure: show's table and the web view say
// so in words, not only by the sums or a color a pipe does not carry.
func TestAFailedFinishWithoutItsStartIsShownAsFailed(t *testing.T) {
	_, f := op(sessionA, "exec", "span-0", 1, 2)
	f.OK, f.ErrorCode = false, auditevent.Ptr("exec_timeout")
	p := writeFile(t, "events.jsonl", canonLines(f))

	r := run(t, "", "show", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `(?m)^\S+ +2 exec +NO START; FAIL exec_timeout +\S+$`, r.stdout)
	assert.Contains(t, r.stdout, "1 operation: 1 failed, 0 open")

	hs := startView(t, webview.Config{Sources: []string{p}})
	for _, path := range []string{"/session/" + sessionA.String(), "/session/" + sessionA.String() + "/op/0"} {
		code, _, body := get(t, hs.URL+path)
		require.Equal(t, 200, code, body)
		assert.Contains(t, body, "no start (finish only); FAILED: exec_timeout", path)
		assert.NotRegexp(t, regexp.MustCompile(`class="orphan"`), body, path)
	}
}
