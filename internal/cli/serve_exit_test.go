package cli

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
