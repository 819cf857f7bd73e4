package sandboxaudit

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```\n")

// docPipeline completes a doc's exporter fragment (no service section) into
// a configuration the collector can run.
const docPipeline = `receivers:
  sandboxaudit: {endpoint: 127.0.0.1:8088}
service:
  pipelines:
    logs: {receivers: [sandboxaudit], exporters: [sandboxaudit]}
`

// docProcessorPipeline completes a doc's processor fragment: a traces
// pipeline through every processor it defines, in order.
func docProcessorPipeline(t *testing.T, body string) string {
	t.Helper()
	var doc struct {
		Processors yaml.Node `yaml:"processors"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(body), &doc))
	var ids []string
	for i := 0; i+1 < len(doc.Processors.Content); i += 2 {
		ids = append(ids, doc.Processors.Content[i].Value)
	}
	require.NotEmpty(t, ids, "a processors block without processors")
	return `receivers:
  sandboxaudit: {endpoint: 127.0.0.1:8088}
exporters:
  sandboxaudit: {file: {path: ./audit/events.jsonl}}
service:
  pipelines:
    traces: {receivers: [sandboxaudit], processors: [` + strings.Join(ids, ", ") + `], exporters: [sandboxaudit]}
`
}

// TestDocConfigExamplesAreValid loads every yaml block of the docs and the
// component READMEs through the distribution's factories and validation:
// a whole configuration as it is, an exporter or processor fragment inside
// a minimal pipeline. docs/examples.md's are TestExamplesDocConfigsAreValid's.
func TestDocConfigExamplesAreValid(t *testing.T) {
	fw := witnesstest.Start(t, "witness.example/w1", nil)
	// What a reader puts in place of the docs' shortened values.
	// Absolute key paths move into the scratch directory's keys/.
	placeholders := strings.NewReplacer(
		"witness.example/w1+8023b436+BNd1…", fw.VKey,
		"/etc/sandbox-audit/audit.key", "./keys/audit.key",
		"/etc/sandboxaudit/redact.key", "./keys/redact.key")
	checked := 0
	for _, file := range docFiles(t) {
		if file == filepath.Join("docs", "examples.md") {
			continue
		}
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		for i, m := range yamlBlock.FindAllStringSubmatch(string(raw), -1) {
			body := placeholders.Replace(m[1])
			if !isConfigBlock(body) {
				// A few keys shown alone are the exporter's: checked in it.
				body = asExporterKeys(body)
			}
			checked++
			t.Run(file+"#"+strconv.Itoa(i), func(t *testing.T) {
				// Relative paths resolve in a scratch directory where the
				// signing key the docs name has been made with keygen.
				dir := t.TempDir()
				t.Chdir(dir)
				makeAuditKey(t, dir)
				require.NoError(t, os.WriteFile(filepath.Join("keys", "redact.key"), []byte("an example redaction hash key\n"), 0o600))
				for _, env := range []string{"AUDIT_TOKEN", "INTAKE_TOKEN"} {
					t.Setenv(env, "example-token")
				}
				uris := []string{writeConfig(t, "doc.yaml", body)}
				switch {
				case strings.Contains(body, "\nservice:"):
				case strings.HasPrefix(body, "processors:"):
					uris = append(uris, writeConfig(t, "pipeline.yaml", docProcessorPipeline(t, body)))
				default:
					uris = append(uris, writeConfig(t, "pipeline.yaml", docPipeline))
				}
				require.NoError(t, validate(t, uris...), "%s: yaml block %d:\n%s", file, i, body)
			})
		}
	}
	require.GreaterOrEqual(t, checked, 10, "the docs' configuration examples")
}

// isConfigBlock reports whether a doc's yaml block is a whole
// configuration or a section of one, rather than a few keys shown alone.
func isConfigBlock(body string) bool {
	return strings.Contains(body, "\nservice:") ||
		slices.ContainsFunc([]string{"exporters:", "extensions:", "receivers:", "processors:", "# "},
			func(start string) bool { return strings.HasPrefix(body, start) })
}

// asExporterKeys nests a block of exporter keys, shown alone in a doc, in
// an exporter section with the one key every exporter needs.
func asExporterKeys(body string) string {
	indented := "    " + strings.ReplaceAll(strings.TrimSuffix(body, "\n"), "\n", "\n    ")
	return "exporters:\n  sandboxaudit:\n    file: {path: ./audit/events.jsonl}\n" + indented + "\n"
}

func writeConfig(t *testing.T, name, body string) string {
	t.Helper()
	p, err := filepath.Abs(name)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return "file:" + p
}
