package metadatatest

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docHeader is the first line of a documentation.md written by hand in
// mdatagen's shape.
const docHeader = "[comment]: <> (Written by hand in the shape mdatagen generates from metadata.yaml; TestDocumentationMatchesMetadata keeps it in step.)\n"

// Documentation renders the documentation.md mdatagen would write for the
// telemetry of md: one section per metric, sorted by name, with a table of
// its attributes.
func Documentation(md Metadata) string {
	var b strings.Builder
	b.WriteString(docHeader + "\n# " + md.Type + "\n\n## Internal Telemetry\n\nThe following telemetry is emitted by this component.\n")
	for _, name := range sortedKeys(md.Telemetry.Metrics) {
		m := md.Telemetry.Metrics[name]
		b.WriteString("\n### " + InstrumentName(name) + "\n\n" + m.Description + "\n\n")
		stability := capitalize(m.Stability)
		if m.Sum != nil {
			b.WriteString("| Unit | Metric Type | Value Type | Monotonic | Stability |\n| ---- | ----------- | ---------- | --------- | --------- |\n")
			monotonic := "false"
			if m.Sum.Monotonic {
				monotonic = "true"
			}
			b.WriteString("| " + m.Unit + " | Sum | " + capitalize(m.Sum.ValueType) + " | " + monotonic + " | " + stability + " |\n")
		} else if m.Gauge != nil {
			b.WriteString("| Unit | Metric Type | Value Type | Stability |\n| ---- | ----------- | ---------- | --------- |\n")
			b.WriteString("| " + m.Unit + " | Gauge | " + capitalize(m.Gauge.ValueType) + " | " + stability + " |\n")
		}
		if len(m.Attributes) == 0 {
			continue
		}
		b.WriteString("\n#### Attributes\n\n| Name | Description | Values | Semantic Convention |\n| ---- | ----------- | ------ | ------------------- |\n")
		for _, id := range m.Attributes {
			a := md.Attributes[id]
			values := "Any " + map[string]string{"string": "Str", "int": "Int", "bool": "Bool", "double": "Double"}[a.Type]
			if len(a.Enum) > 0 {
				values = strings.Join(a.Enum, ", ")
			}
			b.WriteString("| " + a.Key(id) + " | " + a.Description + " | " + values + " | - |\n")
		}
	}
	return b.String()
}

// CheckDocumentation compares the documentation.md at path with what
// Documentation renders from md.
func CheckDocumentation(t testing.TB, md Metadata, path string) {
	t.Helper()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, Documentation(md), string(got),
		"%s is out of step with metadata.yaml: replace it with the expected text above", path)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
