package cli

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A file's name reaches the terminal in an error too (a file missing, a
// FIFO refused): a name holding a terminal escape or a newline is shown as
// escapes there, as in the bad-line reports, so it can neither act on the
// terminal nor forge a line of the report.
func TestReadErrorsShowFileNamesAsEscapes(t *testing.T) {
	dir := t.TempDir()
	hostile := "no\x1b[31m\nshow: forged.jsonl"
	missing := filepath.Join(dir, hostile)
	fifo := filepath.Join(dir, "fifo\x1b[1m.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, args := range [][]string{
		{"show", missing}, {"show", fifo},
		{"sessions", missing}, {"sessions", fifo},
		{"serve", "--listen", "127.0.0.1:0", missing}, {"serve", "--listen", "127.0.0.1:0", fifo},
		{"serve", "--key", missing, fifo},
	} {
		r := run(t, "", args...)
		assert.NotEqual(t, exitOK, r.code, args)
		assert.NotContains(t, r.stderr, "\x1b", args)
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
		assert.True(t, strings.Contains(r.stderr, `no\x1b[31m\nshow: forged.jsonl`) ||
			strings.Contains(r.stderr, `fifo\x1b[1m.jsonl`), "%v: the name as escapes: %q", args, r.stderr)
	}
}
