package main

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit"
)

// secretsConfig has a secret in every place a configuration can hold
// one: URL passwords (the audit exporter's endpoint and proxy, a witness,
// an upstream exporter's endpoint), headers and inline key material.
const secretsConfig = `
receivers:
  sandboxaudit:
    endpoint: 127.0.0.1:0
exporters:
  sandboxaudit:
    file:
      path: %DIR%/audit.jsonl
      integrity:
        signing_key_file: %DIR%/signing.key
        witnesses:
          - endpoint: https://witness:wit-s3cret@witness.example/add
            public_key: witness.example+12345678+AQID
    http:
      endpoint: https://user:end-s3cret@audit.example/v1/events
      proxy_url: http://proxy:prx-s3cret@proxy.example:3128
      headers:
        Authorization: Bearer hdr-s3cret
      tls:
        key_pem: "-----BEGIN PRIVATE KEY-----\nkey-s3cret\n-----END PRIVATE KEY-----"
        cert_pem: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
  otlphttp:
    endpoint: https://otlp:otl-s3cret@otlp.example:4318
service:
  pipelines:
    logs:
      receivers: [sandboxaudit]
      exporters: [sandboxaudit, otlphttp]
`

var secrets = []string{"end-s3cret", "prx-s3cret", "wit-s3cret", "otl-s3cret", "hdr-s3cret", "key-s3cret"}

func printConfig(t *testing.T, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(secretsConfig, "%DIR%", dir)), 0o600))
	var out, errOut bytes.Buffer
	cmd := newCommand(sandboxaudit.CollectorSettings(), append([]string{"print-config", "--validate=false", "--config", path}, extra...))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	require.NoError(t, cmd.Execute(), errOut.String())
	return out.String()
}

// TestPrintConfigHidesSecrets: print-config shows no password of a URL,
// no header value and no key material, in YAML and in JSON; the URLs are
// still there, with their user names.
func TestPrintConfigHidesSecrets(t *testing.T) {
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			out := printConfig(t, "--format", format)
			for _, s := range secrets {
				require.NotContains(t, out, s, "printed in clear")
			}
			for _, u := range []string{
				"https://user:xxxxx@audit.example/v1/events",
				"http://proxy:xxxxx@proxy.example:3128",
				"https://witness:xxxxx@witness.example/add",
				"https://otlp:xxxxx@otlp.example:4318",
			} {
				require.Contains(t, out, u)
			}
			require.Contains(t, out, "signing.key", "a key file's path is shown")
			require.Contains(t, out, "witness.example+12345678+AQID", "a public key is shown")
		})
	}
}

// TestPrintConfigUnredactedShowsAll: --mode unredacted is asked for in
// so many words, and shows the configuration as written.
func TestPrintConfigUnredactedShowsAll(t *testing.T) {
	out := printConfig(t, "--mode", "unredacted")
	require.Contains(t, out, "https://user:end-s3cret@audit.example/v1/events")
}

// TestRedactURLPasswordsAgreesWithRedacted: each URL comes out as
// url.URL.Redacted writes it, in YAML and JSON strings alike.
func TestRedactURLPasswordsAgreesWithRedacted(t *testing.T) {
	for _, raw := range []string{
		"https://user:secret@host.example/path?q=1",
		"https://user@host.example/",
		"https://:secret@host.example",
		"https://user:@host.example",
		"http://user:p%40ss@host.example:8080",
		"http://user:p@ss@host.example/x",
		"https://host.example/a@b",
		"https://opentelemetry.io/schemas/1.40.0",
	} {
		u, err := url.Parse(raw)
		require.NoError(t, err, raw)
		want := u.Redacted()
		require.Equal(t, "endpoint: "+want+"\n", string(redactURLPasswords([]byte("endpoint: "+raw+"\n"))), raw)
		require.Equal(t, `"endpoint": "`+want+`",`, string(redactURLPasswords([]byte(`"endpoint": "`+raw+`",`))), raw)
	}
}
