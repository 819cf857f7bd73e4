package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSourceCodeAssignments: a string literal given to a secret-named
// variable, constant or member in source code is cut, in the languages
// agents write; a call, a name or an expression is code, and stays.
func TestSourceCodeAssignments(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct {
		in, want string
		kind     Kind
	}{
		{`	apiKey := "abc123xyz"`, `	apiKey := "[REDACTED:api_key]"`, KindAPIKey},
		{"\tdbPassword:=`hunter2`", "\tdbPassword:=`[REDACTED:password]`", KindPassword},
		{`	apiKey := "` + openaiKey + `"`, `	apiKey := "[REDACTED:openai_key]"`, KindOpenAIKey},
		{`const token = "abc123xyz"`, `const token = "[REDACTED:token]"`, KindToken},
		{`const apiKey = 'abc123xyz';`, `const apiKey = '[REDACTED:api_key]';`, KindAPIKey},
		{"let clientSecret = `abc\n123`;", "let clientSecret = `[REDACTED:secret]`;", KindSecret},
		{`private static final String DB_PASSWORD = "hunter2";`, `private static final String DB_PASSWORD = "[REDACTED:password]";`, KindPassword},
		{`$password = 'hunter2';`, `$password = '[REDACTED:password]';`, KindPassword},
		{`connect({ host: "db", password: "hunter2" })`, `connect({ host: "db", password: "[REDACTED:password]" })`, KindPassword},
		{`cfg := Config{User: "a", Password: "hunter2"}`, `cfg := Config{User: "a", Password: "[REDACTED:password]"}`, KindPassword},
		{`api_key = "abc123xyz"`, `api_key = "[REDACTED:api_key]"`, KindAPIKey},
		{`export AWS_SECRET_ACCESS_KEY=abc123xyz`, `export AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]`, KindAWSSecretKey},
		{"API_TOKEN := abc123\n", "API_TOKEN := [REDACTED:token]\n", KindToken}, // a Makefile
	} {
		var c Counts
		got, _ := r.String(tc.in, &c)
		assert.Equal(t, tc.want, got)
		assert.Equal(t, 1, c[tc.kind], "%q: counts %v", tc.in, c)
		_, changed := r.String(got, nil)
		assert.False(t, changed, "idempotent: %q", got)
	}
	assertKept(t, r,
		"\ttoken := lexer.Next()", "password = getpass()", "    api_key = os.environ[\"API_KEY\"]",
		"  password: getpass.getpass(),", "\tkey := \"name\"", "\tapiKey := cfg.APIKey",
		"const token = process.env.TOKEN;", `if password == "hunter2" {`, `{ password: pw, user: "a" }`,
		`const token = "";`, `token := "$TOKEN"`, "see a.password = below in the text",
	)
}
