package integrity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A plain copy beside its compressed segment is compared up to the first
// difference: a sparse terabyte in its place is not read whole.
func TestTwinProblemOfASparsePlainCopy(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "events-20261206T010000Z-000001.jsonl")
	require.NoError(t, os.WriteFile(plain, []byte(lines(1, 3)), 0o600))
	packed := plain + filesink.ZstdSuffix
	writeZstdFile(t, packed, []byte(lines(1, 3)))
	f, err := os.OpenFile(plain, os.O_WRONLY|os.O_TRUNC, 0o600)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<40))
	require.NoError(t, f.Close())
	p := twinProblem(filesink.Segment{Path: packed, Plain: plain, Seq: 1, Compressed: true})
	require.Contains(t, p, "a plain copy of compressed segment")
}
