package sandboxaudit

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestExamplesDocConfigsAreValid loads each configuration docs/examples.md
// shows (testdata/examples) through the real factories and their Validate,
// and checks that the doc still shows it byte for byte, so neither can rot.
func TestExamplesDocConfigsAreValid(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("docs", "examples.md"))
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
			assert.True(t, strings.Contains(string(doc), "```yaml\n"+string(body)+"```\n"),
				"docs/examples.md must show %s as it is, in a yaml block", p)
			// Relative paths in the examples (./keys/audit.key) resolve
			// against a scratch directory, where the signing key the
			// integrity example names is made as its comment says.
			dir := t.TempDir()
			t.Chdir(dir)
			if strings.Contains(string(body), "signing_key_file") {
				makeAuditKey(t, dir)
			}
			t.Setenv("AUDIT_TOKEN", "example-token")
			require.NoError(t, validate(t, "file:"+abs))
		})
	}
}

// TestDocsRequestBodiesAreValid decodes every request body the README's
// quick start and docs/format.md show, as the receiver's intake does, and
// checks the canonical line docs/format.md prints for its start event.
func TestDocsRequestBodiesAreValid(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	bodies := regexp.MustCompile(`(?m)^curl .* -d '(\{.*\})'$`).FindAllStringSubmatch(string(readme), -1)
	require.Len(t, bodies, 2, "the quick start posts a start and a finish")
	for _, b := range bodies {
		_, err := auditevent.DecodeString(b[1])
		require.NoError(t, err, b[1])
	}

	format, err := os.ReadFile(filepath.Join("docs", "format.md"))
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```json\n(.*?)\n```").FindAllStringSubmatch(string(format), -1)
	require.Len(t, blocks, 2, "docs/format.md shows a start and a finish body")
	var lines []string
	for _, b := range blocks {
		e, err := auditevent.DecodeString(b[1])
		require.NoError(t, err, b[1])
		lines = append(lines, string(auditevent.Line(&e)))
	}
	assert.Contains(t, string(format), "```\n"+lines[0]+"```\n",
		"docs/format.md must print the start body's canonical line")
}
