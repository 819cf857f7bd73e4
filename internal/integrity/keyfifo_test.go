package integrity

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A FIFO in the signing key's place is refused, not waited on: the open
// blocked for a writer, and with it the collector's start.
func TestSigningKeyFIFOIsRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "key")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	_, err := LoadSigningKey(fifo)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a regular file")
}
