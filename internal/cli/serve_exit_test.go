package cli

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// serve's exit statuses are the other commands': a trail that cannot be
// read is a problem (1), as it is for show; a bad flag value, the
// --listen port included, is a usage error (2).
func TestServeExitStatuses(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	r := run(t, "", "show", fifo)
	assert.Equal(t, exitProblems, r.code, r.stderr)
	r = run(t, "", "serve", "--listen", "127.0.0.1:0", fifo)
	assert.Equal(t, exitProblems, r.code, r.stderr)

	p := writeFile(t, "events.jsonl", canonLines(op(sessionA, "exec", "x", 1, 2)))
	for _, listen := range []string{"127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1:no-such-service", "127.0.0.1"} {
		r = run(t, "", "serve", "--listen", listen, p)
		assert.Equal(t, exitUsage, r.code, "%s: %s", listen, r.stderr)
		assert.Contains(t, r.stderr, "--listen", listen)
	}
	r = run(t, "", "serve", "--listen", "127.0.0.1:0", "--trace-url", "ftp://x/{trace_id}", p)
	assert.Equal(t, exitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, "--trace-url")
}

// The ids fill a --trace-url's path or query: in its host (or its user
// name) the trail would choose the server a click goes to.
func TestServeRefusesATraceURLWithAnIDInItsHost(t *testing.T) {
	p := writeFile(t, "events.jsonl", canonLines(op(sessionA, "exec", "x", 1, 2)))
	for _, tmpl := range []string{"http://{trace_id}/", "http://{trace_id}.jaeger.example/trace", "https://jaeger.example:{span_id}/trace/{trace_id}",
		"http://{span_id}@jaeger.example/trace/{trace_id}", "http://jaeger.{span_id}/trace/{trace_id}"} {
		r := run(t, "", "serve", "--listen", "127.0.0.1:0", "--trace-url", tmpl, p)
		assert.Equal(t, exitUsage, r.code, "%s: %s", tmpl, r.stderr)
		assert.Contains(t, r.stderr, "--trace-url", tmpl)
	}
	assert.NoError(t, webview.CheckTraceURL("http://127.0.0.1:16686/trace/{trace_id}?uiFind={span_id}"))
	assert.NoError(t, webview.CheckTraceURL("https://jaeger.example/search#{trace_id}"))
}

// An id in a --trace-url's port is refused as an id out of place, not
// as a URL that is not http.
func TestServeSaysATraceURLsPortHoldsNoID(t *testing.T) {
	r := run(t, "", "serve", "--listen", "127.0.0.1:0", "--trace-url", "https://jaeger.example:{span_id}/trace/{trace_id}", writeFile(t, "events.jsonl", ""))
	assert.Equal(t, exitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, "not its host, port or user name")
}
