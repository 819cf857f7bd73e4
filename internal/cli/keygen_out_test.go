package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// --out naming a file, or a path through one, is a bad flag value: exit 2.
func TestKeygenOutAFileIsAUsageError(t *testing.T) {
	file := writeFile(t, "not-a-dir", "x")
	for _, out := range []string{file, filepath.Join(file, "keys")} {
		res := run(t, "", "keygen", "--name", "ci", "--out", out)
		require.Equal(t, exitUsage, res.code, out)
		require.Contains(t, res.stderr, "keygen: --out: "+file+" exists and is not a directory")
	}
}

// Others who can write to --out (without the sticky bit) can swap the key:
// keygen writes it and warns, naming the directory and its mode.
func TestKeygenWarnsOfAWorldWritableOut(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	res := run(t, "", "keygen", "--name", "ci", "--out", dir)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "keygen: WARN --out "+dir+" is writable by everyone (mode 0777, no sticky bit)")
	_, err := os.Stat(filepath.Join(dir, "ci.key"))
	require.NoError(t, err, "the key is still written")

	sticky := t.TempDir()
	require.NoError(t, os.Chmod(sticky, 0o777|os.ModeSticky))
	res = run(t, "", "keygen", "--name", "ci", "--out", sticky)
	require.Equal(t, 0, res.code, res.stderr)
	require.Empty(t, res.stderr, "with the sticky bit, only the owner renames or removes the key")
}
