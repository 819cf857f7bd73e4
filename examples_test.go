package sandboxaudit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// TestREADMEExamplesAreValid loads each configuration the README shows
// (testdata/examples) through the real factories and their Validate, and
// checks that the README still shows it byte for byte, so neither can rot.
func TestREADMEExamplesAreValid(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	paths, err := filepath.Glob(filepath.Join("testdata", "examples", "*.yaml"))
	require.NoError(t, err)
	require.Len(t, paths, 4, "file, HTTP with spool, integrity, Kafka")
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		require.NoError(t, err)
		t.Run(filepath.Base(p), func(t *testing.T) {
			body, err := os.ReadFile(abs)
			require.NoError(t, err)
			assert.True(t, strings.Contains(string(readme), "```yaml\n"+string(body)+"```\n"),
				"README.md must show %s as it is, in a yaml block", p)
			// Relative paths in the examples (./keys/audit.key) resolve
			// against a scratch directory, where the signing key the
			// integrity example names is made as its comment says.
			dir := t.TempDir()
			t.Chdir(dir)
			if strings.Contains(string(body), "signing_key_file") {
				require.NoError(t, os.Mkdir(filepath.Join(dir, "keys"), 0o700))
				_, _, err := integrity.GenerateKeyFiles(filepath.Join(dir, "keys"), "audit")
				require.NoError(t, err)
			}
			t.Setenv("AUDIT_TOKEN", "example-token")
			require.NoError(t, validate(t, "file:"+abs))
		})
	}
}
