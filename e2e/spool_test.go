package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// pendingBytes reads the spool's on-disk state (internal/spool's format):
// the lines file P and P.offset {"inode":I,"offset":N}, N being the first
// unacknowledged byte of the file with inode I.
func pendingBytes(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	require.NoError(t, err)
	size := fi.Size()
	b, err := os.ReadFile(path + ".offset")
	if errors.Is(err, os.ErrNotExist) {
		return size
	}
	require.NoError(t, err)
	var off struct {
		Inode  uint64 `json:"inode"`
		Offset int64  `json:"offset"`
	}
	require.NoError(t, json.Unmarshal(b, &off), "%s.offset: %q", path, b)
	st, ok := fi.Sys().(*syscall.Stat_t)
	require.True(t, ok)
	if st.Ino != off.Inode || off.Offset > size {
		return size
	}
	return size - off.Offset
}
