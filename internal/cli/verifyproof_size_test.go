package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerifyProofRefusesAnOversizedFileUnread: a proof file larger than a
// bundle can be is refused from its size, before its bytes are read (a
// sparse file of 64 MiB costs nothing on disk, and reading it would cost
// 64 MiB of memory), with the error a pipe of that size gets.
func TestVerifyProofRefusesAnOversizedFileUnread(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(dir, "k")).code)
	pub := filepath.Join(dir, "k", "cli-test.pub")
	big := filepath.Join(dir, "big.proof")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(maxBundleBytes+1))
	require.NoError(t, f.Close())

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := run(t, "", "verify-proof", "--key", pub, big)
	runtime.ReadMemStats(&after)

	assert.Equal(t, exitProblems, res.code)
	assert.Equal(t, "verify-proof: "+big+": larger than 67174400 bytes: not a proof bundle\n", res.stderr)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "the file's bytes were read")

	// A file of the largest size is read, and fails as a bundle instead.
	require.NoError(t, os.Truncate(big, maxBundleBytes))
	res = run(t, "", "verify-proof", "--key", pub, big)
	assert.Equal(t, exitProblems, res.code)
	assert.NotContains(t, res.stderr, "larger than")
}
