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
    endpoint: 127.0.0.1:8088
exporters:
  sandboxaudit:
    file:
      path: %DIR%/audit.jsonl
      integrity:
        signing_key_file: %DIR%/signing.key
        witnesses:
          - endpoint: https://witness:wit-s3cret@witness.example/add?sig=sig-s3cret&sv=2024
            public_key: witness.example+12345678+AQID
    http:
      endpoint: https://user:end-s3cret@audit.example/v1/events?tenant=acme&token=tok-s3cret&api_key=api-s3cret
      proxy_url: http://proxy:prx-s3cret@proxy.example:3128
      headers:
        Authorization: Bearer hdr-s3cret
      tls:
        key_pem: "-----BEGIN PRIVATE KEY-----\nkey-s3cret\n-----END PRIVATE KEY-----"
        cert_pem: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
  otlphttp:
    endpoint: "https://otlp:otl-s3cret@otlp.example:4318?access_token=acc-s3cret"
service:
  pipelines:
    logs:
      receivers: [sandboxaudit]
      exporters: [sandboxaudit, otlphttp]
`

var secrets = []string{"end-s3cret", "prx-s3cret", "wit-s3cret", "otl-s3cret", "hdr-s3cret", "key-s3cret",
	"tok-s3cret", "api-s3cret", "sig-s3cret", "acc-s3cret"}

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
// no secret-named query value, no header value and no key material, in
// YAML and in JSON; the URLs are still there, with their user names and
// their other query values.
func TestPrintConfigHidesSecrets(t *testing.T) {
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			out := printConfig(t, "--format", format)
			for _, s := range secrets {
				require.NotContains(t, out, s, "printed in clear")
			}
			amp := "&"
			if format == "json" {
				amp = `\u0026`
			}
			for _, u := range []string{
				"https://user:xxxxx@audit.example/v1/events?tenant=acme" + amp + "token=xxxxx" + amp + "api_key=xxxxx",
				"http://proxy:xxxxx@proxy.example:3128",
				"https://witness:xxxxx@witness.example/add?sig=xxxxx" + amp + "sv=2024",
				"https://otlp:xxxxx@otlp.example:4318?access_token=xxxxx",
			} {
				require.Contains(t, out, u)
			}
			require.Contains(t, out, "signing.key", "a key file's path is shown")
			require.Contains(t, out, "witness.example+12345678+AQID", "a public key is shown")
		})
	}
}

// TestPrintConfigUnredactedShowsAll: --mode unredacted is asked for in
// so many words, and shows the configuration as written, but for the
// opaque values (headers, key material) inside the exporter's optional
// sections: the collector marshals an optional section without the
// unredacted option, and docs/operations.md says so.
func TestPrintConfigUnredactedShowsAll(t *testing.T) {
	out := printConfig(t, "--mode", "unredacted")
	for _, s := range []string{"end-s3cret", "tok-s3cret", "prx-s3cret", "wit-s3cret", "otl-s3cret", "acc-s3cret"} {
		require.Contains(t, out, s, "a plain string is shown")
	}
	require.Contains(t, out, "https://user:end-s3cret@audit.example/v1/events")
	for _, s := range []string{"hdr-s3cret", "key-s3cret"} {
		require.NotContains(t, out, s, "an opaque value in an optional section stays hidden")
	}
	require.Contains(t, out, "[REDACTED]")
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

// TestRedactURLQueries: a query value is hidden when its name says it is
// a secret, in any case and percent-encoded; other values, fragments and
// the quotes around a YAML or JSON string stay.
func TestRedactURLQueries(t *testing.T) {
	for raw, want := range map[string]string{
		"endpoint: https://h/ingest?token=abc\n":                       "endpoint: https://h/ingest?token=xxxxx\n",
		"endpoint: https://h/i?api_key=abc&region=eu\n":                "endpoint: https://h/i?api_key=xxxxx&region=eu\n",
		"endpoint: https://h/i?region=eu;Access_Token=abc#top\n":       "endpoint: https://h/i?region=eu;Access_Token=xxxxx#top\n",
		"endpoint: 'https://h/i?sig=abc&sv=1'\n":                       "endpoint: 'https://h/i?sig=xxxxx&sv=1'\n",
		`"endpoint": "https://h/i?X-Amz-Signature=abc\u0026x=1",`:      `"endpoint": "https://h/i?X-Amz-Signature=xxxxx\u0026x=1",`,
		"endpoint: https://h/i?api%5Fkey=abc&key=def&auth=ghi\n":       "endpoint: https://h/i?api%5Fkey=xxxxx&key=xxxxx&auth=xxxxx\n",
		"endpoint: https://h/i?client_secret=abc&password=def\n":       "endpoint: https://h/i?client_secret=xxxxx&password=xxxxx\n",
		"endpoint: https://h/i?q=token&keyboard=1&max_token=5&token\n": "endpoint: https://h/i?q=token&keyboard=1&max_token=5&token\n",
		"schema_url: https://opentelemetry.io/schemas/1.40.0\n":        "schema_url: https://opentelemetry.io/schemas/1.40.0\n",
	} {
		require.Equal(t, want, string(redactURLQueries([]byte(raw))), raw)
	}
}
