package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A symbolic link in a sidecar's place fails verify with a line that says
// the sidecar is a symbolic link and is not followed, naming it, rather
// than O_NOFOLLOW's "too many levels of symbolic links".
func TestVerifyNamesASymlinkedSidecar(t *testing.T) {
	for _, suffix := range []string{".checkpoints", ".segments"} {
		t.Run(suffix, func(t *testing.T) {
			path, _, pub, _ := rotatedFixture(t, 12)
			sidecar := path + suffix
			kept := filepath.Join(t.TempDir(), filepath.Base(sidecar))
			require.NoError(t, os.Rename(sidecar, kept))
			require.NoError(t, os.Symlink(kept, sidecar))

			res := run(t, "", "verify", "--key", pub, filepath.Dir(path))
			require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
			require.Contains(t, res.stdout, sidecar+" is a symbolic link, and an audit file's sidecars are never followed")
			require.NotContains(t, res.stdout+res.stderr, "too many levels")
		})
	}
}
