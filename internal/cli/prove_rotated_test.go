package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A line of a closed segment is proven, and verify-proof places it at its
// leaf of the log, not at the line's number in its file.
func TestProveALineOfASegment(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 17)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Greater(t, len(segs), 1)
	res := run(t, "", "prove", segs[1].Path, "--line", "2")
	require.Equal(t, exitOK, res.code, res.stderr)
	bundle := filepath.Join(t.TempDir(), "line.proof")
	require.NoError(t, os.WriteFile(bundle, []byte(res.stdout), 0o600))
	ok := run(t, "", "verify-proof", "--key", pub, bundle)
	require.Equal(t, exitOK, ok.code, ok.stdout)
	require.Contains(t, ok.stdout, "OK: line 2 of its file (the log's leaf ")
}
