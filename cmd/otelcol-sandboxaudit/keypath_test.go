package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/otelcol"

	"github.com/sandboxaudit/sandboxaudit"
)

// TestRefusalNamesKeysNotGoFields: the collector names a squashed
// section's field by its Go name (clientconfig::tls for http::tls,
// serverconfig::tls for the receiver's tls, timeoutconfig for timeout),
// which no configuration holds; what main prints names the keys.
func TestRefusalNamesKeysNotGoFields(t *testing.T) {
	msg := refusalText(t, t.TempDir(), `receivers:
  sandboxaudit: {endpoint: 127.0.0.1:8088, tls: {ca_file: /a}}
exporters:
  sandboxaudit:
    file: {path: ./audit/events.jsonl}
    http: {endpoint: "http://127.0.0.1:9/x", tls: {ca_file: /a, ca_pem: xx}}
    timeout: -5s
service:
  pipelines:
    logs: {receivers: [sandboxaudit], exporters: [sandboxaudit]}
`, distFactories(t))
	for _, want := range []string{
		"receivers::sandboxaudit::tls: TLS configuration must include both certificate and key",
		"exporters::sandboxaudit::http: tls: provide either a CA file or the PEM-encoded string",
		"exporters::sandboxaudit: timeout value must be greater than or equal to 0",
	} {
		assert.Contains(t, msg, want)
	}
	for _, field := range []string{"clientconfig", "serverconfig", "timeoutconfig"} {
		assert.NotContains(t, msg, field)
	}
}

func TestSquashedNamesAreNoKeys(t *testing.T) {
	factories := distFactories(t)
	names := squashedNames(factories)
	assert.Subset(t, names, []string{"clientconfig", "serverconfig", "timeoutconfig"})
	assert.NotContains(t, names, "tls", "a real key is never taken out")
}

// TestErrorTextKeepsAnotherComponentsError: a line that reads like the
// end of another component's line is still its own error (here
// sandboxaudit's proxy_url, among several joined errors), and is kept. Only
// a line that named a squashed field can be configtls's second report of
// the same error.
func TestErrorTextKeepsAnotherComponentsError(t *testing.T) {
	factories := distFactories(t)
	err := errors.Join(errors.New("exporters::sandboxaudit/a::http: proxy_url: not a valid absolute URL"),
		errors.New("exporters::sandboxaudit::http: endpoint: must be an absolute http:// or https:// URL"),
		errors.New("proxy_url: not a valid absolute URL"))
	assert.Equal(t, err.Error(), errorText(err, factories))
}

// distFactories are the distribution's factories, which name the keys of
// squashed sections.
func distFactories(t *testing.T) otelcol.Factories {
	t.Helper()
	factories, err := sandboxaudit.CollectorSettings().Factories()
	require.NoError(t, err)
	return factories
}

// refusalText writes config to dir/config.yaml, has validate refuse it,
// and returns the refusal as main prints it (errorText with factories).
func refusalText(t *testing.T, dir, config string, factories otelcol.Factories) string {
	t.Helper()
	cfg := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(config), 0o600))
	err := validate(t, "--config", cfg)
	require.Error(t, err)
	return errorText(err, factories)
}
