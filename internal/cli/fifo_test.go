package cli

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A FIFO named as a file is refused at once: opening it waited for a writer
// (a second pass waited for ever, past SIGTERM). A pipe is read as - instead.
func TestFilesMustBeRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	for _, args := range [][]string{
		{"verify", fifo},
		{"verify", "--allow-duplicates", fifo},
	} {
		r := run(t, "", args...)
		assert.NotEqual(t, 0, r.code, "%v", args)
		assert.Contains(t, r.stdout+r.stderr, "not a regular file", "%v", args)
	}
}
