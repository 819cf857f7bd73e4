package sandboxaudit

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension"

	sandboxauditencoding "github.com/sandboxaudit/sandboxaudit/encoding"
	sandboxauditexporter "github.com/sandboxaudit/sandboxaudit/exporter"
	"github.com/sandboxaudit/sandboxaudit/kafkaguardreceiver"
	sandboxauditprocessor "github.com/sandboxaudit/sandboxaudit/processor"
	sandboxauditreceiver "github.com/sandboxaudit/sandboxaudit/receiver"
)

func TestComponents(t *testing.T) {
	f, err := Components()
	require.NoError(t, err)
	assert.Equal(t, []string{"kafka", "otlp", "sandboxaudit"}, typeNames(f.Receivers))
	assert.Equal(t, []string{"batch", "memory_limiter", "sandboxaudit"}, typeNames(f.Processors))
	assert.Equal(t, []string{"debug", "kafka", "otlp_http", "otlphttp", "sandboxaudit"}, typeNames(f.Exporters))
	assert.Equal(t, []string{"bearertokenauth", "sandboxaudit_encoding"}, typeNames(f.Extensions))
	assert.Empty(t, f.Connectors)
	require.NotNil(t, f.Telemetry)

	// Every component has its module recorded for `components`.
	assert.Equal(t, typeNames(f.Receivers), typeNames(f.ReceiverModules))
	assert.Equal(t, typeNames(f.Processors), typeNames(f.ProcessorModules))
	assert.Equal(t, typeNames(f.Exporters), typeNames(f.ExporterModules))
	assert.Equal(t, typeNames(f.Extensions), typeNames(f.ExtensionModules))

	// The embeddable factories are ours.
	assert.Equal(t, "sandboxaudit", ReceiverFactory().Type().String())
	assert.Equal(t, "sandboxaudit", ExporterFactory().Type().String())
	assert.Equal(t, "sandboxaudit_encoding", EncodingExtensionFactory().Type().String())
}

func typeNames[T any](m map[component.Type]T) []string {
	var names []string
	for k := range m {
		names = append(names, k.String())
	}
	sort.Strings(names)
	return names
}

// builderEntry is one component of builder-config.yaml.
type builderEntry struct {
	gomod, importPath string
}

// packagePath is the Go package ocb imports: "import" when given, else the
// module path of "gomod".
func (e builderEntry) packagePath() string {
	if e.importPath != "" {
		return e.importPath
	}
	path, _, _ := strings.Cut(e.gomod, " ")
	return path
}

func readBuilderConfig(t *testing.T) map[string][]builderEntry {
	t.Helper()
	b, err := os.ReadFile("builder-config.yaml")
	require.NoError(t, err)
	ret, err := confmap.NewRetrievedFromYAML(b)
	require.NoError(t, err)
	raw, err := ret.AsRaw()
	require.NoError(t, err)
	doc, ok := raw.(map[string]any)
	require.True(t, ok, "builder-config.yaml is not a mapping")
	out := map[string][]builderEntry{}
	for _, kind := range []string{"receivers", "processors", "exporters", "extensions", "connectors", "providers"} {
		list, _ := doc[kind].([]any)
		for i, item := range list {
			m, ok := item.(map[string]any)
			require.True(t, ok, "%s[%d] is not a mapping", kind, i)
			gomod, _ := m["gomod"].(string)
			require.NotEmpty(t, gomod, "%s[%d]: no gomod", kind, i)
			imp, _ := m["import"].(string)
			out[kind] = append(out[kind], builderEntry{gomod: gomod, importPath: imp})
		}
	}
	return out
}

// TestBuilderConfigMatchesComponents keeps the ocb manifest and the Go
// distribution in step: each manifest entry's package is resolved to the
// component type its factory declares, and the sets must be equal, with the
// module versions the distribution reports.
func TestBuilderConfigMatchesComponents(t *testing.T) {
	// The packages a manifest may name, with their factories' types.
	typeOf := map[string]component.Type{
		"go.opentelemetry.io/collector/receiver/otlpreceiver":                                          otlpreceiver.NewFactory().Type(),
		"go.opentelemetry.io/collector/processor/batchprocessor":                                       batchprocessor.NewFactory().Type(),
		"go.opentelemetry.io/collector/processor/memorylimiterprocessor":                               memorylimiterprocessor.NewFactory().Type(),
		"go.opentelemetry.io/collector/exporter/debugexporter":                                         debugexporter.NewFactory().Type(),
		"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter":             kafkaexporter.NewFactory().Type(),
		"go.opentelemetry.io/collector/exporter/otlphttpexporter":                                      otlphttpexporter.NewFactory().Type(),
		"github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension": bearertokenauthextension.NewFactory().Type(),
		Module + "/receiver":           sandboxauditreceiver.NewFactory().Type(),
		Module + "/kafkaguardreceiver": kafkaguardreceiver.NewFactory().Type(),
		Module + "/exporter":           sandboxauditexporter.NewFactory().Type(),
		Module + "/encoding":           sandboxauditencoding.NewFactory().Type(),
		Module + "/processor":          sandboxauditprocessor.NewFactory().Type(),
	}
	manifest := readBuilderConfig(t)
	for _, e := range manifest["receivers"] {
		assert.NotEqual(t, "github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver", e.packagePath(),
			"builder-config.yaml lists the contrib kafka receiver: an ocb build would lack the encoding check; list %s/kafkaguardreceiver", Module)
	}
	f, err := Components()
	require.NoError(t, err)

	check := func(kind string, modules map[component.Type]string) {
		t.Helper()
		got := map[component.Type]string{}
		for _, e := range manifest[kind] {
			typ, ok := typeOf[e.packagePath()]
			require.True(t, ok, "%s: unknown package %q in builder-config.yaml", kind, e.packagePath())
			_, dup := got[typ]
			require.False(t, dup, "%s: type %q listed twice", kind, typ)
			got[typ] = e.gomod
		}
		assert.Equal(t, typeNames(modules), typeNames(got), kind)
		for typ, gomod := range got {
			assert.Equal(t, modules[typ], gomod, "%s %s: gomod line", kind, typ)
		}
	}
	check("receivers", f.ReceiverModules)
	check("processors", f.ProcessorModules)
	// The manifest names a factory once; Components also lists it under a
	// deprecated alias, which builds the same module.
	exporters := map[component.Type]string{}
	for typ, m := range f.ExporterModules {
		if f.Exporters[typ].Type() == typ {
			exporters[typ] = m
		}
	}
	check("exporters", exporters)
	check("extensions", f.ExtensionModules)
	assert.Empty(t, manifest["connectors"])

	// Providers: the same schemes as the distribution's resolver.
	var schemes []string
	for _, e := range manifest["providers"] {
		pkg := e.packagePath()
		scheme := strings.TrimSuffix(pkg[strings.LastIndex(pkg, "/")+1:], "provider")
		schemes = append(schemes, scheme)
		assert.Equal(t, CollectorSettings().ProviderModules[scheme], e.gomod, "provider %s", scheme)
	}
	sort.Strings(schemes)
	var want []string
	for _, pf := range ConfigProviderSettings().ResolverSettings.ProviderFactories {
		want = append(want, pf.Create(confmap.ProviderSettings{}).Scheme())
	}
	sort.Strings(want)
	assert.Equal(t, want, schemes)
}
