package redact

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// TestJSONTextWithEscapes: output that prints JSON holds escaped quotes
// (a secret store's value is JSON inside a JSON string) and escaped line
// breaks and characters glued to the next word; a secret in it is cut as
// in plain text.
func TestJSONTextWithEscapes(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	const cert = `-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n`
	for _, tc := range []struct{ name, in, want string }{
		{"escaped quote in a value", `{"password":"hun\"ter2"}`, `{"password":"[REDACTED:password]"}`},
		{"JSON in a JSON string", `{"Name":"prod/db","SecretString":"{\"username\":\"admin\",\"password\":\"` + redacttest.Password + `\"}"}`,
			`{"Name":"prod/db","SecretString":"[REDACTED:secret]"}`},
		{"escaped member", `"{\"username\":\"admin\",\"password\":\"` + redacttest.Password + `\"}"`,
			`"{\"username\":\"admin\",\"password\":\"[REDACTED:password]\"}"`},
		{"escaped authorization member", `{\"Authorization\": \"Basic ` + redacttest.BasicAuth + `\"}`,
			`{\"Authorization\": \"Basic [REDACTED:basic_auth]\"}`},
		{"blank before the colon", `{ "password" : "` + redacttest.Password + `" }`, `{ "password" : "[REDACTED:password]" }`},
		{"token after an escaped line break", `{"msg":"logged in\n` + redacttest.GitHubToken + `"}`, `{"msg":"logged in\n[REDACTED:github_token]"}`},
		{"key after a certificate chain", `{"pem":"` + cert + strings.ReplaceAll(redacttest.PEMBlock, "\n", `\n`) + `\n"}`, `{"pem":"` + cert + `[REDACTED:pem_private_key]\n"}`},
		{"escaped CRLF", `"a\r\n` + redacttest.AWSKeyID + `"`, `"a\r\n[REDACTED:aws_access_key]"`},
		{"tab escape", `"\t` + redacttest.SlackToken + `"`, `"\t[REDACTED:slack_token]"`},
		{"unicode escape", `{"url":"https://h/x?a=1\u0026api_key=` + redacttest.APIKey + `"}`, `{"url":"https://h/x?a=1\u0026api_key=[REDACTED:api_key]"}`},
		{"unicode escape before a token", `"\u003c` + redacttest.GitLabToken + `\u003e"`, `"\u003c[REDACTED:gitlab_token]\u003e"`},
		{"percent-encoded equals before a token", "https://h/login?next=%2Fcb%3Ftoken%3D" + redacttest.GitHubToken + "%26x%3D1", "https://h/login?next=%2Fcb%3Ftoken%3D[REDACTED:github_token]%26x%3D1"},
		{"percent-encoded quote around a token", "data=%7B%22k%22%3A%22" + redacttest.DatabricksToken + "%22%7D", "data=%7B%22k%22%3A%22[REDACTED:databricks_token]%22%7D"},
		{"hex escape before a token", `"GET / HTTP/1.1" 200 "\x22` + redacttest.GitHubToken + `\x22"`, `"GET / HTTP/1.1" 200 "\x22[REDACTED:github_token]\x22"`},
		{"hex escape in a bytes repr", `b'\x3d` + redacttest.DatabricksToken + `'`, `b'\x3d[REDACTED:databricks_token]'`},
		{"octal escape before a token", `\042` + redacttest.SlackToken + `\042`, `\042[REDACTED:slack_token]\042`},
		{"percent-encoded equals encoded twice before a token", "q=x%253D" + redacttest.GitHubToken, "q=x%253D[REDACTED:github_token]"},
		{"bare percent before a token", "50%" + redacttest.DatabricksToken, "50%[REDACTED:databricks_token]"},
		{"percent-encoded blank before a token", "q=deploy%20with%20" + redacttest.SlackToken, "q=deploy%20with%20[REDACTED:slack_token]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := r.String(tc.in, nil)
			assert.Equal(t, tc.want, got)
			again, changed := r.String(got, nil)
			assert.False(t, changed, "idempotent: %q", again)
		})
	}
	// an escaped backslash before a letter is no escape: the letter starts
	// the word
	for _, s := range []string{`"C:\\new\\` + `token_path"`, `{"path":"C:\\temp\\notes.txt"}`, "100%deadbeef0123456789abcdef0123456789", "printf '%08x%s' 3f9a1c2b7d4e5f60718293a4b5c6d7e8", "%41KIA" + redacttest.AWSKeyID[4:], `\x41KIA` + redacttest.AWSKeyID[4:], `\101KIA` + redacttest.AWSKeyID[4:]} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}

// TestTerminalColors: output captured from a terminal wraps words in ANSI
// color sequences (ESC [ 32 m); a token right after one is still cut.
func TestTerminalColors(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ in, want string }{
		{"\x1b[32m" + redacttest.GitHubToken + "\x1b[0m", "\x1b[32m[REDACTED:github_token]\x1b[0m"},
		{".env:3:AWS_ACCESS_KEY_ID=\x1b[01;31m\x1b[K" + redacttest.AWSKeyID + "\x1b[m\x1b[K", ".env:3:AWS_ACCESS_KEY_ID=\x1b[01;31m\x1b[K[REDACTED:aws_access_key]\x1b[m\x1b[K"},
		{"\x1b[32m+DB_PASSWORD=" + redacttest.Password + "\x1b[m", "\x1b[32m+DB_PASSWORD=[REDACTED:password]\x1b[m"},
	} {
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, tc.want, got)
	}
}

// TestEscapedQuoteInEscapedJSON: in JSON text inside a JSON string, a quote
// in the value is escaped twice (\\\") and does not end it.
func TestEscapedQuoteInEscapedJSON(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	got, _ := r.String(`{\"password\":\"p\\\"w0rd\",\"user\":\"bob\"}`, nil)
	assert.Equal(t, `{\"password\":\"[REDACTED:password]\",\"user\":\"bob\"}`, got)
	got, _ = r.String(`{\"password\":\"back\\\\\",\"user\":\"bob\"}`, nil)
	assert.Equal(t, `{\"password\":\"[REDACTED:password]\",\"user\":\"bob\"}`, got)
}
