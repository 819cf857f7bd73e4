package redact

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// Real-looking samples, built at run time so that no scanner flags this
// file. None of them is a live credential.
var (
	ghToken    = "ghp_" + "R8sTq2VwXyZ1aBcDeFgHiJkLmNoPqRsTuV4w"
	ghFine     = "github_pat_" + "11ABCDEFG0123456789_abcdefghijKLMNOPQRSTuvwxyz0123456789abcdefghijklmnopqrstuvwxyzAB"
	glToken    = "glpat-" + "xQ3vL9mN2pR7sT1uW4yZ"
	slackToken = "xoxb-" + "1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	openaiKey  = "sk-" + "proj-Xy7Zq1Lm3Np5Rt7Vx9Bz2Cd4Fg6Hj8Kl0Mn2Pq4St6Uv8Wx"
	awsKeyID   = "AKIA" + "IOSFODNN7EXAMPLE"
	awsSecret  = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	jwt        = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0" + "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemBlock   = "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDq\n-----END " + "OPENSSH PRIVATE KEY-----"
)

func mustNew(t testing.TB, s Settings) *Redactor {
	t.Helper()
	r, err := New(s)
	require.NoError(t, err)
	require.NotNil(t, r)
	return r
}

func TestDetectorsCutEachKind(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	cases := []struct {
		name, in, want string
		kind           Kind
	}{
		{"bearer header", "Authorization: Bearer abc123def456ghi789", "Authorization: Bearer [REDACTED:bearer_token]", KindBearerToken},
		{"bearer header in a shell line", `curl -H "authorization: bearer abc.def-ghi" https://api.example.com`, `curl -H "authorization: bearer [REDACTED:bearer_token]" https://api.example.com`, KindBearerToken},
		{"basic header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:basic_auth]", KindBasicAuth},
		{"github token scheme", "Authorization: token " + ghToken, "Authorization: token [REDACTED:authorization]", KindAuthorization},
		{"bare bearer", "Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "Bearer [REDACTED:bearer_token]", KindBearerToken},
		{"jwt", "token is " + jwt + " ok", "token is [REDACTED:jwt] ok", KindJWT},
		{"aws key id", "export AWS_ACCESS_KEY_ID=" + awsKeyID, "export AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key]", KindAWSAccessKey},
		{"aws secret variable", "AWS_SECRET_ACCESS_KEY=" + awsSecret, "AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]", KindAWSSecretKey},
		{"aws secret flag", "aws configure --secret-access-key " + awsSecret + " --profile dev", "aws configure --secret-access-key [REDACTED:aws_secret_key] --profile dev", KindAWSSecretKey},
		{"aws credentials file", "[default]\naws_secret_access_key = " + awsSecret + "\n", "[default]\naws_secret_access_key = [REDACTED:aws_secret_key]\n", KindAWSSecretKey},
		{"github classic", "git push https://github.com/o/r " + ghToken, "git push https://github.com/o/r [REDACTED:github_token]", KindGitHubToken},
		{"github fine-grained", ghFine, "[REDACTED:github_token]", KindGitHubToken},
		{"github token in a variable", "GITHUB_TOKEN=" + ghToken, "GITHUB_TOKEN=[REDACTED:github_token]", KindGitHubToken},
		{"gitlab", "glab auth login --token=" + glToken, "glab auth login --token=[REDACTED:gitlab_token]", KindGitLabToken},
		{"slack", "SLACK=" + slackToken, "SLACK=[REDACTED:slack_token]", KindSlackToken},
		{"openai", "OPENAI=" + openaiKey, "OPENAI=[REDACTED:openai_key]", KindOpenAIKey},
		{"pem", "key:\n" + pemBlock + "\ndone", "key:\n[REDACTED:pem_private_key]\ndone", KindPEMPrivateKey},
		{"pem cut short", "x " + pemBlock[:80], "x [REDACTED:pem_private_key]", KindPEMPrivateKey},
		{"url password", "git clone https://alice:s3cr3t-Pa55@git.example.com/r.git", "git clone https://alice:[REDACTED:url_password]@git.example.com/r.git", KindURLPassword},
		{"url password holding a '/' after URLs with none", "see http://a:b/c d@e, http://x:y/z and https://app:Xk9/q2#Z@db/p",
			"see http://a:b/c d@e, http://x:y/z and https://app:[REDACTED:url_password]@db/p", KindURLPassword},
		{"github token as a URL's user", "git clone https://" + ghToken + "@github.com/o/r.git", "git clone https://[REDACTED:github_token]@github.com/o/r.git", KindGitHubToken},
		{"openai key as a URL's user", "curl https://" + openaiKey + "@api.example.com/v1", "curl https://[REDACTED:openai_key]@api.example.com/v1", KindOpenAIKey},
		{"env password", "DB_PASSWORD=hunter2", "DB_PASSWORD=[REDACTED:password]", KindPassword},
		{"argv password rest of element", "--password=correct horse", "--password=[REDACTED:password]", KindPassword},
		{"api key flag", "tool --api-key abc123 run", "tool --api-key [REDACTED:api_key] run", KindAPIKey},
		{"camel api key", "apiKey=abc123", "apiKey=[REDACTED:api_key]", KindAPIKey},
		{"query token", "GET /cb?access_token=abc123&x=1", "GET /cb?access_token=[REDACTED:token]&x=1", KindToken},
		{"client secret", "CLIENT_SECRET='a b c'", "CLIENT_SECRET='[REDACTED:secret]'", KindSecret},
		{"credential", "--credential=xyz", "--credential=[REDACTED:credential]", KindCredential},
		{"yaml password", "db:\n  password: hunter2\n", "db:\n  password: [REDACTED:password]\n", KindPassword},
		{"json password", `{"user": "a", "password": "hunter2"}`, `{"user": "a", "password": "[REDACTED:password]"}`, KindPassword},
		{"header api key", "X-Api-Key: 0123abcd", "X-Api-Key: [REDACTED:api_key]", KindAPIKey},
		{"pgpassword", "PGPASSWORD=pw psql", "PGPASSWORD=[REDACTED:password]", KindPassword},
		{"private key variable", "PRIVATE_KEY=abcdef", "PRIVATE_KEY=[REDACTED:private_key]", KindPrivateKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c Counts
			got, changed := r.String(tc.in, &c)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.in != tc.want, changed)
			if tc.in != tc.want {
				assert.Equal(t, 1, c[tc.kind], "counts %v", c)
				assert.Equal(t, 1, c.Total())
			}
		})
	}
}

// TestOrdinaryTextStays: what commands and their output are full of must
// not be cut.
func TestOrdinaryTextStays(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, s := range []string{
		"--token-file /var/run/secrets/token",
		"--token-file=/var/run/secrets/token",
		"--password-file pw.txt",
		"GITHUB_TOKEN_PATH=/run/t",
		"TOKEN_FILE=/run/t",
		"SECRET_NAME=db-creds",
		"--max-tokens 4096",
		"max_tokens=4096",
		"num_tokens=12",
		"git checkout 3f786850e387550fdab836ed7e6dc881de23001b",
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"session 9e3c4b5a-1f2e-4d3c-8b7a-6f5e4d3c2b1a started",
		"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
		"https://example.com:8443/path?q=1",
		"http://user@example.com/",
		"failed to read token: file not found",
		"the bearer of bad news",
		"basic usage: tool [flags]",
		"PASSWORD=$DB_PASSWORD",
		"PASSWORD=${DB_PASSWORD}",
		"GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp/sa.json",
		"kubectl get secret db-creds -o yaml",
		"cat /etc/passwd",
		"persist_workspace hydrate_workspace resolve_exposed_port",
		"AKIAIOSFODNN7EXAMPLEX", // 21 characters: not a key id
		"sk-learn is not a key",
		"disk-0123456789abcdefghijklmnopqrstuvwxyz",
		"ghp_short",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
		"a == b",
		"pass_through=true",
		"[REDACTED:github_token]",
	} {
		var c Counts
		got, changed := r.String(s, &c)
		assert.False(t, changed, "%q became %q", s, got)
		assert.Equal(t, s, got)
		assert.Zero(t, c.Total())
	}
}

func TestSecretsAreGone(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, secret := range []string{ghToken, ghFine, glToken, slackToken, openaiKey, awsKeyID, jwt} {
		got, _ := r.String("x "+secret+" y", nil)
		assert.NotContains(t, got, secret)
		assert.True(t, strings.HasPrefix(got, "x [REDACTED:"), got)
	}
}

// TestJSONStructureAfterSecretName: in pretty-printed JSON output (aws sts
// assume-role) a secret name may open an object or array; the brace is no
// value, and the members inside are cut on their own.
func TestJSONStructureAfterSecretName(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	in := "{\n    \"Credentials\": {\n        \"AccessKeyId\": \"" + awsKeyID + "\",\n        \"SecretAccessKey\": \"" + awsSecret + "\"\n    },\n    \"secrets\": [\n    ]\n}"
	want := "{\n    \"Credentials\": {\n        \"AccessKeyId\": \"[REDACTED:aws_access_key]\",\n        \"SecretAccessKey\": \"[REDACTED:aws_secret_key]\"\n    },\n    \"secrets\": [\n    ]\n}"
	var c Counts
	got, _ := r.String(in, &c)
	assert.Equal(t, want, got)
	assert.Equal(t, 2, c.Total(), "counts %v", c)
}

// TestBooleanSecretFlags: a flag that turns a prompt off or on takes no
// value; the argument after it is no secret.
func TestBooleanSecretFlags(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, s := range []string{"pg_dump --no-password mydb", "ansible-playbook --ask-vault-pass site.yml", "psql -w --no-password -d app"} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
	for _, argv := range []string{`{"argv":["pg_dump","--no-password","mydb"]}`, `{"argv":["ansible-playbook","--ask-become-pass","site.yml"]}`} {
		d := auditevent.MustParseData(argv)
		got, changed := r.Data(d, nil)
		assert.False(t, changed, "%s became %s", argv, got.String())
	}
}

// TestStripeKeys: Stripe's secret and restricted keys, live and test, are
// cut wherever they stand; its publishable keys are public.
func TestStripeKeys(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	body := "51H8xYz" + "AbCdEfGhIjKlMnOpQrStUv"
	for _, prefix := range []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"} {
		var c Counts
		got, _ := r.String("curl -u "+prefix+body+": https://api.stripe.com/v1/charges", &c)
		assert.Equal(t, "curl -u [REDACTED:stripe_key]: https://api.stripe.com/v1/charges", got)
		assert.Equal(t, 1, c[KindStripeKey])
	}
	for _, s := range []string{"pk_live_" + body, "sk_live_short", "sk_prod_" + body} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}

// TestYAMLBlockScalar: a YAML block scalar (password: |) holds the value on
// the more indented lines that follow; they are cut, the lines after stay.
func TestYAMLBlockScalar(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ in, want string }{
		{"stringData:\n  password: |\n    hunter2-x\n  user: app\n", "stringData:\n  password: |\n    [REDACTED:password]\n  user: app\n"},
		{"token: >-\n  abc\n\n  def\nnext: 1", "token: >-\n  [REDACTED:token]\nnext: 1"},
		{"- api_key: |+\r\n    k1\r\n- name: x", "- api_key: |+\r\n    [REDACTED:api_key]\r\n- name: x"},
		{"secret: |\nnot: indented", "secret: |\nnot: indented"},
	} {
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, tc.want, got)
		_, changed := r.String(got, nil)
		assert.False(t, changed, "idempotent: %q", got)
	}
}

// TestPassNames: names that end in pass (Java's keytool -storepass,
// DBPASS), camel-case PassWord and PassPhrase, and openssl's -passin and
// -passout say password.
func TestPassNames(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ in, want string }{
		{"keytool -genkeypair -storepass chg3it -keypass chg4it -alias a", "keytool -genkeypair -storepass [REDACTED:password] -keypass [REDACTED:password] -alias a"},
		{"DBPASS=hunter2", "DBPASS=[REDACTED:password]"},
		{"PassWord=hunter2", "PassWord=[REDACTED:password]"},
		{`{"passPhrase": "correct horse"}`, `{"passPhrase": "[REDACTED:password]"}`},
		{"openssl pkcs12 -export -passout pass:hunter2 -passin pass:hunter3", "openssl pkcs12 -export -passout pass:[REDACTED:password] -passin pass:[REDACTED:password]"},
	} {
		var c Counts
		got, _ := r.String(tc.in, &c)
		assert.Equal(t, tc.want, got)
		assert.Equal(t, c.Total(), c[KindPassword], "counts %v", c)
	}
	for _, s := range []string{"BYPASS=1", "--bypass cache", "compass=north", "passport=x", "password_word_count=3"} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}

// TestNetrcAndConnectionStrings: a .netrc login (machine, login and
// password words) and Azure connection strings hold secrets under names
// that have no '=' or say key after account or shared access.
func TestNetrcAndConnectionStrings(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ in, want string }{
		{"machine git.example.com login alice password s3cr3t-Pw", "machine git.example.com login alice password [REDACTED:password]"},
		{"machine api.example.com\n  login bob\n  password hunter2\n", "machine api.example.com\n  login bob\n  password [REDACTED:password]\n"},
		{"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=abc+def/ghi==;EndpointSuffix=core.windows.net",
			"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:api_key];EndpointSuffix=core.windows.net"},
		{"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abc+def=",
			"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=[REDACTED:api_key]"},
	} {
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, tc.want, got)
	}
	for _, s := range []string{"please enter your password below", "login failed: password expired", "SharedAccessKeyName=Root", "account_key_file=/etc/k"} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}

// TestXMLAndPropertiesFiles: Maven's settings.xml keeps a password as an
// element, Java properties as dotted names with blanks around '='.
func TestXMLAndPropertiesFiles(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ in, want string }{
		{"<server>\n  <id>central</id>\n  <username>alice</username>\n  <password>hunter2-Xq9</password>\n</server>",
			"<server>\n  <id>central</id>\n  <username>alice</username>\n  <password>[REDACTED:password]</password>\n</server>"},
		{"<apiToken>t0k3n</apiToken>", "<apiToken>[REDACTED:token]</apiToken>"},
		{"spring.datasource.password = hunter2\nspring.datasource.url = jdbc:x", "spring.datasource.password = [REDACTED:password]\nspring.datasource.url = jdbc:x"},
		{"  app.client-secret: s3cr3t", "  app.client-secret: [REDACTED:secret]"},
	} {
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, tc.want, got)
	}
	for _, s := range []string{"<password></password>", "<passwordPolicy>strict</passwordPolicy>", "see a.password = below in the text",
		"Usage: login <user> <password>\n\nThe password is read from stdin.\n<b>x</b>", "Enter <token>: "} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}

// TestLongNames: a name longer than the words kept is classified by its
// last words, where the secret word of a long name is.
func TestLongNames(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	name := "ACME_PLATFORM_PRODUCTION_EU_WEST_1_ANALYTICS_WAREHOUSE_LOADER_SERVICE_DB_PASSWORD"
	require.Greater(t, len(name), maxNameLen)
	got, _ := r.String(name+"=hunter2", nil)
	assert.Equal(t, name+"=[REDACTED:password]", got)
	d, changed := r.Data(auditevent.MustParseData(`{"env":{"`+name+`":"hunter2"}}`), nil)
	assert.True(t, changed)
	assert.Equal(t, `{"env":{"`+name+`":"[REDACTED:password]"}}`, d.String())
	long := strings.Repeat("PASSWORD_", 10) + "FILE"
	got, changed = r.String(long+"=/run/x", nil)
	assert.False(t, changed, got)
}

// TestHeaderInAQuotedArgument: a header passed in quotes on a shell line
// (curl -H "X-Api-Key: …") starts its quoted string; the value is cut to
// the closing quote.
func TestHeaderInAQuotedArgument(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ in, want string }{
		{`curl -H "X-Api-Key: abc123" https://x`, `curl -H "X-Api-Key: [REDACTED:api_key]" https://x`},
		{`curl -H 'api-key: abc123' https://x`, `curl -H 'api-key: [REDACTED:api_key]' https://x`},
		{`curl --header "PRIVATE-TOKEN: abc123" https://gitlab.example.com`, `curl --header "PRIVATE-TOKEN: [REDACTED:token]" https://gitlab.example.com`},
		{`wget --header="X-Vault-Token: hvs.abc" https://x`, `wget --header="X-Vault-Token: [REDACTED:token]" https://x`},
	} {
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, tc.want, got)
	}
	for _, s := range []string{`echo failed to read token: file not found`, `log "reading token file" ok`} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}

// TestLiteralsAndDottedReferences: a JSON literal after a secret name
// ("pass": true) and a dotted property reference (${env.DB_PASSWORD}) hold
// no secret.
func TestLiteralsAndDottedReferences(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, s := range []string{`{"pass": true, "token": null, "secret": false}`, "<password>${env.MVN_PASSWORD}</password>", "password=${settings.db.password}"} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
	got, _ := r.String(`{"pass": "true-Xq9", "password": 1234}`, nil)
	assert.Equal(t, `{"pass": "[REDACTED:password]", "password": [REDACTED:password]}`, got)
}

// TestGoogleAndHuggingFaceKeys: a Google API key (Gemini's REST API takes
// it as ?key=) and a Hugging Face token are cut wherever they stand.
func TestGoogleAndHuggingFaceKeys(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	google := "AIza" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrSt-_w"
	hf := "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
	for _, tc := range []struct {
		in, want string
		kind     Kind
	}{
		{`curl "https://generativelanguage.googleapis.com/v1beta/models/m:generateContent?key=` + google + `"`,
			`curl "https://generativelanguage.googleapis.com/v1beta/models/m:generateContent?key=[REDACTED:google_api_key]"`, KindGoogleAPIKey},
		{"$ cat ~/.cache/huggingface/token\n" + hf + "\n", "$ cat ~/.cache/huggingface/token\n[REDACTED:huggingface_token]\n", KindHuggingFaceToken},
	} {
		var c Counts
		got, _ := r.String(tc.in, &c)
		assert.Equal(t, tc.want, got)
		assert.Equal(t, 1, c[tc.kind])
	}
	for _, s := range []string{"AIzaShort", "hf_hub_download_model_file_from_cache_x", "hf_" + "abc"} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}

// TestGrepOutput: grep prefixes each line with the file name and line
// number; a YAML key, header or INI name after the prefix starts its line.
func TestGrepOutput(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ in, want string }{
		{"config/db.yml:3:  password: hunter2\nconfig/db.yml:4:  host: db", "config/db.yml:3:  password: [REDACTED:password]\nconfig/db.yml:4:  host: db"},
		{"./.aws/credentials:aws_secret_access_key = abc123", "./.aws/credentials:aws_secret_access_key = [REDACTED:aws_secret_key]"},
		{"src/app.py-12-    api_key: abc123", "src/app.py-12-    api_key: [REDACTED:api_key]"},
	} {
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, tc.want, got)
	}
	for _, s := range []string{"error: failed to read token: file not found", "main.go:12:5: undefined: token", "x-12-y-3-token"} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}

// TestSlackWebhook: a Slack incoming webhook URL is a credential (anyone
// who has it can post); its secret, the last path segment, is cut.
func TestSlackWebhook(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	secret := "XyZ0aBcD1eFgH2iJkL3mNoP4"
	var c Counts
	got, _ := r.String(`curl -X POST -d '{"text":"hi"}' https://hooks.slack.com/services/T0123ABCD/B0456EFGH/`+secret+` && echo ok`, &c)
	assert.Equal(t, `curl -X POST -d '{"text":"hi"}' https://hooks.slack.com/services/T0123ABCD/B0456EFGH/[REDACTED:slack_token] && echo ok`, got)
	assert.Equal(t, 1, c[KindSlackToken])
	for _, s := range []string{"https://hooks.slack.com/", "https://api.slack.com/services/x/y/z", "https://hooks.slack.com/services/"} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}

// TestSlackURLNotAWebhook: a hooks.slack.com URL that is no webhook is
// scanned as any text, so a secret in its path is still cut.
func TestSlackURLNotAWebhook(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	got, _ := r.String("https://hooks.slack.com/services/x;password=hunter2xyz", nil)
	assert.Equal(t, "https://hooks.slack.com/services/x;password=[REDACTED:password]", got)
	got, _ = r.String("https://hooks.slack.com/services/xoxb-1234567890-abcdefghij", nil)
	assert.Equal(t, "https://hooks.slack.com/services/[REDACTED:slack_token]", got)
}

// TestVaultTokens: HashiCorp Vault's service, batch and recovery tokens
// (hvs., hvb., hvr. and the token's body) are cut wherever they stand, as
// `vault login` and `vault token create` print them in a table.
func TestVaultTokens(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	body := "CAESIJ1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvWxYz0123456789abGh4KHGh2cy5BQkNERUZHSElKS0xNTk9QUVJT"
	for _, prefix := range []string{"hvs.", "hvb.", "hvr."} {
		in := "Key                  Value\n---                  -----\ntoken_accessor       x\n" +
			"client_token         " + prefix + body + "\nttl 768h"
		var c Counts
		got, _ := r.String(in, &c)
		assert.NotContains(t, got, body[:24], prefix)
		assert.Contains(t, got, "[REDACTED:vault_token]", prefix)
		assert.Equal(t, 1, c[KindVaultToken], prefix)
	}
	for _, s := range []string{"hvs.short", "see hvs.Config for details", "thvs." + body} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}
