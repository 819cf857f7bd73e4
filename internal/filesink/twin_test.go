package filesink

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// A FIFO in a twin's place is refused at once, never opened for a peer
// that does not come: verify compares twins a host's attacker can swap.
func TestSameAsCompressedRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo, zst := filepath.Join(dir, "seg.jsonl"), filepath.Join(dir, "seg.jsonl.zst")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	require.NoError(t, os.WriteFile(zst, nil, 0o600))
	_, err := SameAsCompressed(fifo, zst)
	require.ErrorIs(t, err, fsutil.ErrNotRegular)
	_, err = SameAsCompressed(zst, fifo)
	require.ErrorIs(t, err, fsutil.ErrNotRegular)
}
