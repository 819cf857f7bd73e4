package sandboxaudit

import (
	_ "embed"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/httpprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/otelcol"
)

//go:embed default-config.yaml
var defaultConfig string

// DefaultConfig returns the YAML configuration the distribution runs when no
// --config is given: loopback receivers, the audit trail in
// ./audit/events.jsonl with exec output redacted.
func DefaultConfig() string {
	return defaultConfig
}

// DefaultConfigURI returns DefaultConfig as a "yaml:" configuration URI, the
// form a collector's config resolver takes. The yaml provider reads a whole
// document after the scheme, so no temporary file is needed.
func DefaultConfigURI() string {
	return "yaml:" + defaultConfig
}

// ConfigProviderSettings returns resolver settings with the file, env, yaml
// and http providers, resolving uris (DefaultConfigURI when none are given).
// A --config flag on the command line replaces these URIs.
func ConfigProviderSettings(uris ...string) otelcol.ConfigProviderSettings {
	if len(uris) == 0 {
		uris = []string{DefaultConfigURI()}
	}
	return otelcol.ConfigProviderSettings{
		ResolverSettings: confmap.ResolverSettings{
			URIs: uris,
			ProviderFactories: []confmap.ProviderFactory{
				fileprovider.NewFactory(),
				envprovider.NewFactory(),
				yamlprovider.NewFactory(),
				httpprovider.NewFactory(),
			},
			DefaultScheme: "env",
		},
	}
}
