package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCodeAndProseStay: text an agent's sandbox prints every day (Go and
// Python source, generated API docs, --help text) that names a secret without holding
// one stays whole.
func TestCodeAndProseStay(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertKept(t, r,
		// a quoted name in prose, not a member of JSON or YAML
		"// PageToken sets the optional parameter \"pageToken\": A page token received\n",
		`the "password": field must be at least 8 characters`,
		// a code literal names no secret
		"\tline.Token = nil\n", "    password = None\n", "        self.token = None\n",
		"def connect(host, password=None):\n", "  token: undefined,\n",
		"\tBPF_FILDROP_PASS                  = 0x0\n",
		// a selector is code that fetches the secret
		"\tc.groupassetsrequest.PageToken = x.NextPageToken\n",
		"\t\tPassword: env.Password,\n", "    token = p.current\n",
		"        password = self.key_password\n",
		"\t\"OpenProcessToken\":                  {},\n",
		// help text about a flag
		"       --pass <phrase>\n", "If --pass is provided several times, the last one is used.",
		"Use --password to specify a password.", "[--clear-secrets | --update-secrets]",
		// a call that closes its object or list
		`x = {"password": get_pw()}`, `creds = [{"token": fetch(k)}]`,
	)
}

// TestSecretsNextToCodeStillCut: values that look like the code above but
// hold a secret are still cut.
func TestSecretsNextToCodeStillCut(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ in, want string }{
		{"\"password\": hunter2\n", "\"password\": [REDACTED:password]\n"},
		{`{"token": abc123, "n": 1}`, `{"token": [REDACTED:token], "n": 1}`},
		{"  \"api_key\": \"sk-live-abc\"  and more", "  \"api_key\": \"[REDACTED:api_key]\"  and more"},
		{"\tsmtpPass = hunter2\n", "\tsmtpPass = [REDACTED:password]\n"},
		{"VAULT_TOKEN = hvs.CAESIJmQ0ZjE4ZjA4LWE3NmQtNGI4YS05\n", "VAULT_TOKEN = [REDACTED:vault_token]\n"},
		{"DOPPLER_TOKEN = dp.st.prd.aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9\n", "DOPPLER_TOKEN = [REDACTED:doppler_token]\n"},
		{"password = 0xdeadbeefcafe0123456789\n", "password = [REDACTED:password]\n"},
		{"password = Nonesuch\n", "password = [REDACTED:password]\n"},
		{"\tpassword = &hunter2\n", "\tpassword = [REDACTED:password]\n"},
		{"PASSWORD=correct.horse.battery.staple\n", "PASSWORD=[REDACTED:password]\n"},
		{"DB_PASSWORD=MyDog.Rex\n", "DB_PASSWORD=[REDACTED:password]\n"},
		{"password: MyS3cret.Pass\n", "password: [REDACTED:password]\n"},
		{"mysql --password hunter2 db", "mysql --password [REDACTED:password] db"},
		{"curl --pass island --key k", "curl --pass [REDACTED:password] --key k"},
	} {
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, tc.want, got)
	}
}

// TestTokenInCallArgumentsCut: a call is code, but a token in a known
// format among its arguments is still cut.
func TestTokenInCallArgumentsCut(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	const tok = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	for _, tc := range []struct{ in, want string }{
		{`token = os.getenv("X", "` + tok + `")`, `token = os.getenv("X", "[REDACTED:github_token]")`},
		{"password = get(\"" + tok + "\")\n", "password = get(\"[REDACTED:github_token]\")\n"},
		{"password = getpass()\n", "password = getpass()\n"},
	} {
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, tc.want, got)
	}
	// A call inside a call's arguments is scanned too (the second pass
	// also takes g( for a value, which hides more than it must).
	got, _ := r.String(`token = f(password=g("`+tok+`"))`, nil)
	assert.NotContains(t, got, tok[4:])
}
