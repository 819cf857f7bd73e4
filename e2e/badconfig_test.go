package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadConfigFailsAtStartOnce: the built collector refuses a bad config
// before it starts anything, exits 1, and says so once, naming the key
// (cobra would print the error a second time).
func TestBadConfigFailsAtStartOnce(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`receivers:
  sandboxaudit:
    endpoint: `+freeAddr(t)+`
    max_pending: 0
exporters:
  sandboxaudit:
    file:
      path: `+filepath.Join(dir, "events.jsonl")+`
service:
  pipelines:
    logs: {receivers: [sandboxaudit], exporters: [sandboxaudit]}
`), 0o600))
	code, out := runCollector(t, dir, "--config", cfg)
	require.NotZero(t, code, "%s", out)
	assert.Equal(t, 1, code)
	assert.Equal(t, 1, strings.Count(out, "receivers::sandboxaudit: max_pending: must be positive"), "%s", out)
	_, err := os.Stat(filepath.Join(dir, "events.jsonl"))
	assert.True(t, os.IsNotExist(err), "nothing started")
}

// TestKafkaReceiverThatCannotStartExits: a kafka receiver whose client
// cannot be built (its TLS CA file is not there) stops the collector at
// start, exit 1, naming the file, rather than a collector that logged the
// error and then waits for ever in its shutdown.
func TestKafkaReceiverThatCannotStartExits(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	ca := filepath.Join(dir, "missing-ca.pem")
	cfg := filepath.Join(dir, "central.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`extensions:
  sandboxaudit_encoding:
receivers:
  kafka:
    brokers: [`+freeAddr(t)+`]
    tls: {ca_file: `+ca+`}
    logs: {topics: [sandbox-audit], encoding: sandboxaudit_encoding}
    initial_offset: earliest
    message_marking: {after: true}
exporters:
  sandboxaudit:
    file: {path: `+filepath.Join(dir, "events.jsonl")+`}
service:
  extensions: [sandboxaudit_encoding]
  telemetry: {metrics: {level: none}}
  pipelines:
    logs: {receivers: [kafka], exporters: [sandboxaudit]}
`), 0o600))
	code, out := runCollector(t, dir, "--config", cfg)
	require.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, `Error: cannot start pipelines: failed to start "kafka" receiver: `)
	assert.Contains(t, out, ca)
}

// TestRefusalNamesTheKeysOfSquashedSections: the binary names http::tls
// and timeout as a configuration writes them, once, not by the Go fields
// that hold them (clientconfig::tls, timeoutconfig).
func TestRefusalNamesTheKeysOfSquashedSections(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`receivers:
  sandboxaudit: {endpoint: `+freeAddr(t)+`}
exporters:
  sandboxaudit:
    http: {endpoint: "http://127.0.0.1:9/x", tls: {ca_file: /a, ca_pem: xx}}
    timeout: -5s
service:
  pipelines:
    logs: {receivers: [sandboxaudit], exporters: [sandboxaudit]}
`), 0o600))
	code, out := runCollector(t, dir, "validate", "--config", cfg)
	assert.Equal(t, 1, code, "%s", out)
	assert.Equal(t, 1, strings.Count(out, "exporters::sandboxaudit::http: tls: provide either a CA file or the PEM-encoded string"), "%s", out)
	assert.Contains(t, out, "exporters::sandboxaudit: timeout value must be greater than or equal to 0")
	assert.NotContains(t, out, "config::")
	assert.NotContains(t, out, "timeoutconfig")
}
