package sandboxaudit

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/metadatatest"
)

// componentsWithMetrics are the directories whose metadata.yaml declares
// the component's own metrics and whose README lists them.
var componentsWithMetrics = []string{"receiver", "exporter", "processor", "encoding"}

// docMetric is a metric named in a code span, with the attribute names
// written in braces after it (a value, reason="x", is dropped).
var docMetric = regexp.MustCompile("`(otelcol_sandboxaudit_|…_)([a-z_]+)(?:\\{([^}`]*)\\})?`")

// metricAttributes gives each metric of a metadata.yaml by its instrument
// name (otelcol_…), with its attributes' names on data points.
func metricAttributes(t *testing.T, dir string) map[string][]string {
	t.Helper()
	md := metadatatest.MustLoad(t, filepath.Join(dir, "metadata.yaml"))
	out := map[string][]string{}
	for name, m := range md.Telemetry.Metrics {
		var keys []string
		for _, id := range m.Attributes {
			keys = append(keys, md.Attributes[id].Key(id))
		}
		slices.Sort(keys)
		out[metadatatest.InstrumentName(name)] = keys
	}
	return out
}

// componentPrefix is what a component's metric names share,
// otelcol_sandboxaudit_<component>, which a README writes as "…".
func componentPrefix(metrics map[string][]string) string {
	for name := range metrics {
		parts := strings.SplitN(name, "_", 4)
		return strings.Join(parts[:3], "_")
	}
	return ""
}

// attributeNames gives the names in a "{a, b="v"}" list, sorted.
func attributeNames(list string) []string {
	var names []string
	for _, part := range strings.Split(list, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(part), "=")
		if name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// TestComponentREADMEsNameEveryMetric checks each component README's list
// of metrics against its metadata.yaml: every metric is named, in full or
// as …_<rest> after the component's prefix, with exactly its attributes in
// braces (none when it has none), and a name the README gives is a metric
// of the component.
func TestComponentREADMEsNameEveryMetric(t *testing.T) {
	for _, dir := range componentsWithMetrics {
		t.Run(dir, func(t *testing.T) {
			metrics := metricAttributes(t, dir)
			require.NotEmpty(t, metrics)
			raw, err := os.ReadFile(filepath.Join(dir, "README.md"))
			require.NoError(t, err)
			prefix := componentPrefix(metrics)
			named := map[string][][]string{}
			for _, m := range docMetric.FindAllStringSubmatch(string(raw), -1) {
				full := "otelcol_sandboxaudit_" + m[2]
				if m[1] == "…_" {
					full = prefix + "_" + m[2]
				}
				_, ok := metrics[full]
				if assert.True(t, ok, "%s/README.md names %s, which is not a metric of the component", dir, full) {
					named[full] = append(named[full], attributeNames(m[3]))
				}
			}
			for name, attrs := range metrics {
				mentions, ok := named[name]
				if assert.True(t, ok, "%s/README.md does not name the metric %s", dir, name) {
					assert.True(t, slices.ContainsFunc(mentions, func(got []string) bool { return slices.Equal(got, attrs) }),
						"%s/README.md names %s with the attributes %v, not its attributes {%s}", dir, name, mentions, strings.Join(attrs, ","))
				}
			}
		})
	}
}

// TestDocsNameMetricsThatExist checks every metric the docs name in full:
// it is a metric of one of the components, and the attributes written after
// it are among its attributes.
func TestDocsNameMetricsThatExist(t *testing.T) {
	metrics := map[string][]string{}
	for _, dir := range componentsWithMetrics {
		for name, attrs := range metricAttributes(t, dir) {
			metrics[name] = attrs
		}
	}
	checked := 0
	for _, file := range docFiles(t) {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range docMetric.FindAllStringSubmatch(string(raw), -1) {
			if m[1] != "otelcol_sandboxaudit_" {
				continue
			}
			checked++
			name := m[1] + m[2]
			attrs, ok := metrics[name]
			if !assert.True(t, ok, "%s names %s, which is not a metric", file, name) {
				continue
			}
			for _, a := range attributeNames(m[3]) {
				assert.Contains(t, attrs, a, "%s: %s has no attribute %s", file, name, a)
			}
		}
	}
	require.Greater(t, checked, 20, "the docs name the metrics to watch")
}
