package sandboxauditexporter

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// writtenStdout sends one exec finish record whose raw stdout is out
// through the exporter, with exec output kept and redaction at its
// default, and returns the stdout of the line written.
func writtenStdout(t *testing.T, out string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	cfg.PayloadPolicy = auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(true)}
	withFile(cfg, path, auditevent.PolicyOverride{})
	te := startExporters(t, cfg)
	ld := earlyExecFinish()
	rec := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	rec.Attributes().PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw([]byte(out))
	require.NoError(t, te.logs.ConsumeLogs(context.Background(), ld))
	lines := readLines(t, path)
	require.Len(t, lines, 1)
	ev, err := auditevent.Decode([]byte(strings.TrimSuffix(lines[0], "\n")))
	require.NoError(t, err)
	require.NotNil(t, ev.Stdout)
	return *ev.Stdout
}

// pemKeyBody is the base64 body of a made-up private key, built at run
// time so that no scanner flags this file.
var pemKeyBody = strings.Repeat("MIIEowIBAAKCAQEA"+"u1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/Iz\n", 3)

// TestPrivateKeyAfterTextWithoutNewline: `cat notes.txt id_rsa`, where
// notes.txt does not end in a newline, prints the key's BEGIN line joined
// to the last word before it. The block is cut all the same; the word
// before it stays.
func TestPrivateKeyAfterTextWithoutNewline(t *testing.T) {
	for _, key := range []string{
		"-----BEGIN RSA " + "PRIVATE KEY-----\n" + pemKeyBody + "-----END RSA " + "PRIVATE KEY-----\n",
		"-----BEGIN OPENSSH " + "PRIVATE KEY-----\n" + pemKeyBody, // output cut short
	} {
		got := writtenStdout(t, "todo: rotate keys-----"+"x\nlast line"+key)
		assert.Equal(t, "todo: rotate keys-----"+"x\nlast line[REDACTED:pem_private_key]"+tail(key), got)
		assert.NotContains(t, got, "u1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0")
	}
	kept := "build-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\nmake-----BEGIN notes"
	assert.Equal(t, kept, writtenStdout(t, kept), "a certificate and a word are no private key")
}

// tail is what follows a PEM block's cut: the newline after its END line.
func tail(key string) string {
	if strings.HasSuffix(key, "-----\n") {
		return "\n"
	}
	return ""
}

// TestCurlVerboseHeaders: curl -v prints each request header after "> "
// and each response header after "< ", CRLF-terminated; a header whose
// name says secret loses its value there as at a line's start. The other
// headers, and a '>' that is no such prefix, stay.
func TestCurlVerboseHeaders(t *testing.T) {
	out := "* Connected to api.example.com\r\n> GET /v1/me HTTP/1.1\r\n> Host: api.example.com\r\n" +
		"> X-Api-Key: " + "Tr0ub4dorhkPkenG5\r\n> PRIVATE-TOKEN: " + "q8Zr2LmN5pX7\r\n> user-agent: curl/8.5.0\r\n>\r\n" +
		"< HTTP/1.1 200 OK\r\n< x-auth-token: " + "v9Yt3KcW1sQe\r\n< content-type: application/json\r\n"
	want := "* Connected to api.example.com\r\n> GET /v1/me HTTP/1.1\r\n> Host: api.example.com\r\n" +
		"> X-Api-Key: [REDACTED:api_key]\r\n> PRIVATE-TOKEN: [REDACTED:token]\r\n> user-agent: curl/8.5.0\r\n>\r\n" +
		"< HTTP/1.1 200 OK\r\n< x-auth-token: [REDACTED:token]\r\n< content-type: application/json\r\n"
	assert.Equal(t, want, writtenStdout(t, out))
	kept := "if a > token: skip\n<b> password: see below\n>>token: x\n"
	assert.Equal(t, kept, writtenStdout(t, kept), "a comparison, markup and a quote of a quote")
}

// TestConnectionStringPwd: ODBC and ADO.NET connection strings name the
// password Pwd, after the ';' that parts their keys; it is cut there. PWD
// elsewhere is the working directory and stays.
func TestConnectionStringPwd(t *testing.T) {
	out := "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db,1433;Uid=sa;Pwd=" + "Tr0ub4dorhkPkenG5;Encrypt=yes\n" +
		"Server=db; Database=app; User Id=sa; PWD=" + "q8Zr2LmN5pX7\n"
	want := "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db,1433;Uid=sa;Pwd=[REDACTED:password];Encrypt=yes\n" +
		"Server=db; Database=app; User Id=sa; PWD=[REDACTED:password]\n"
	assert.Equal(t, want, writtenStdout(t, out))
	kept := "PWD=/home/agent/work\nOLDPWD=/home/agent\ncd src; pwd\n"
	assert.Equal(t, kept, writtenStdout(t, kept), "the working directory")
}

// TestCurlUserWithEquals: curl takes --user=alice:password as it takes
// --user alice:password; the password is cut in an argv element, in a
// shell line and in output alike.
func TestCurlUserWithEquals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	te := startExporters(t, cfg)
	data := `{"command":["curl","--user=alice:` + `Hunter2Hunter2x","https://api.example.com"],` +
		`"script":["sh","-c","curl -s --user=bob:` + `q8Zr2LmN5pX7 https://x | jq ."]}`
	ld := plog.NewLogs()
	rec := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	rec.SetEventName("sandbox.session.finish")
	rec.Body().SetStr(strings.Replace(execFinishJSON("null", "null"), `"data":{"exit_code":0}`, `"data":`+data, 1))
	require.NoError(t, te.logs.ConsumeLogs(context.Background(), ld))
	lines := readLines(t, path)
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `"command":["curl","--user=alice:[REDACTED:password]","https://api.example.com"]`)
	assert.Contains(t, lines[0], `"curl -s --user=bob:[REDACTED:password] https://x | jq ."`)

	assert.Equal(t, "+ curl --user=carol:[REDACTED:password] https://x\n",
		writtenStdout(t, "+ curl --user=carol:"+"v9Yt3KcW1sQe https://x\n"))
	kept := "useradd --user=carol x\nls --user=x\n"
	assert.Equal(t, kept, writtenStdout(t, kept), "another tool's --user, a user without a password")
}

// TestHeaderAfterEscapedLineBreak: http.client's debug output (requests
// with HTTPConnection.debuglevel = 1) prints each request as a Python bytes
// repr, its header lines apart by escaped CRLFs. A header whose name says
// secret loses its value, to the next escaped line break; the other
// headers stay. So does a key line of JSON text.
func TestHeaderAfterEscapedLineBreak(t *testing.T) {
	out := `send: b'GET /v1/me HTTP/1.1\r\nHost: api.example.com\r\nX-Api-Key: ` + `Tr0ub4dorhkPkenG5\r\nAccept: */*\r\n\r\n'` + "\n" +
		`send: b'POST / HTTP/1.1\r\nX-Auth-Token: ` + `q8Zr2LmN5pX7'` + "\n" +
		`{"log":"loaded config\npassword: ` + `v9Yt3KcW1sQe\nport: 5432"}` + "\n"
	want := `send: b'GET /v1/me HTTP/1.1\r\nHost: api.example.com\r\nX-Api-Key: [REDACTED:api_key]\r\nAccept: */*\r\n\r\n'` + "\n" +
		`send: b'POST / HTTP/1.1\r\nX-Auth-Token: [REDACTED:token]'` + "\n" +
		`{"log":"loaded config\npassword: [REDACTED:password]\nport: 5432"}` + "\n"
	assert.Equal(t, want, writtenStdout(t, out))
	kept := `{"msg":"error\nfailed to read token: file not found\ntoken: $API_TOKEN"}` + "\n"
	assert.Equal(t, kept, writtenStdout(t, kept), "a sentence, a reference")
}

// TestPgpassLines: `cat ~/.pgpass` prints host:port:database:user:password
// lines (a field may be '*', a ':' in one is escaped); each password is
// cut. Other lines with colons stay.
func TestPgpassLines(t *testing.T) {
	out := "db.internal:5432:prod:app:" + "Tr0ub4dorhkPkenG5\n" +
		"*:*:*:replicator:" + "q8Zr2L\\:mN5pX7\r\n" +
		"*:5432:prod:app:" + "Lk2Jh7Gf4Ds\n" +
		"db.internal:*:prod:app:" + "Qw8Er5Ty2Ui\n" +
		"*:*:prod:app:" + "Zx3Cv6Bn9Ma\n" +
		"10.0.0.7:6432:*:postgres:" + "v9Yt3KcW1sQe"
	want := "db.internal:5432:prod:app:[REDACTED:password]\n" +
		"*:*:*:replicator:[REDACTED:password]\r\n" +
		"*:5432:prod:app:[REDACTED:password]\n" +
		"db.internal:*:prod:app:[REDACTED:password]\n" +
		"*:*:prod:app:[REDACTED:password]\n" +
		"10.0.0.7:6432:*:postgres:[REDACTED:password]"
	assert.Equal(t, want, writtenStdout(t, out))
	kept := "main.go:12:5: undefined: x\n10:30:00\naa:bb:cc:dd:ee\nfe80::1:2:3\n" +
		"root:x:0:0:root:/root:/bin/bash\nhttp://db:5432/app:x\nat 12:30:45:01 ok\nMakefile:12:all:build:test\n"
	assert.Equal(t, kept, writtenStdout(t, kept), "a compiler's message, a time, a MAC, an IPv6 address, /etc/passwd, grep -n")
}

// TestServiceBusSASToken: a Service Bus, Event Hubs or IoT Hub SAS token
// is "SharedAccessSignature sr=…&sig=…&se=…&skn=…", without the storage
// service's sv=; its signature is cut wherever it stands in the query.
func TestServiceBusSASToken(t *testing.T) {
	out := "SharedAccessSignature sr=sb%3A%2F%2Fns.servicebus.windows.net%2Fq&sig=" + "AbCdEf0123456789AbCdEf%3D&se=1700000000&skn=RootManageSharedAccessKey\n" +
		"SharedAccessSignature sig=" + "Zy9XwV8uT7sR6qP5oN4m%2B%3D&se=1700000000&sr=hub.azure-devices.net\n"
	want := "SharedAccessSignature sr=sb%3A%2F%2Fns.servicebus.windows.net%2Fq&sig=[REDACTED:token]&se=1700000000&skn=RootManageSharedAccessKey\n" +
		"SharedAccessSignature sig=[REDACTED:token]&se=1700000000&sr=hub.azure-devices.net\n"
	assert.Equal(t, want, writtenStdout(t, out))
	kept := "curl 'https://example.com/?a=1&sig=v1'\n"
	assert.Equal(t, kept, writtenStdout(t, kept), "a sig of another query")
}

// TestURLPasswordWithDelimiter: a generated password pasted unencoded into
// a database URL may hold '/', '?' or '#'; it is cut to the '@' all the
// same. A port before a path with an '@' in it is no password.
func TestURLPasswordWithDelimiter(t *testing.T) {
	out := "DATABASE_URL=postgres://app:" + "Xk9/q2Lm#Zp?7@db.internal:5432/prod\n" +
		"redis-cli -u redis://:" + "aB3/cD4@cache:6379\n"
	want := "DATABASE_URL=postgres://app:[REDACTED:url_password]@db.internal:5432/prod\n" +
		"redis-cli -u redis://:[REDACTED:url_password]@cache:6379\n"
	assert.Equal(t, want, writtenStdout(t, out))
	kept := "https://medium.com:443/@writer\nhttp://localhost:3000/users/@me?x=1\nhttps://www.npmjs.com/package/@scope/pkg\n" +
		"see http://a:b/c d@e\n"
	assert.Equal(t, kept, writtenStdout(t, kept), "a port, a path with '@', a blank before the '@'")
}

// TestQuotedAssignmentWithBlanks: NAME=value quoted as one argument may
// hold a passphrase with blanks (docker run -e "…", and the + export '…'
// lines of set -x); its value runs to the closing quote. Other pairs in
// the quote, and names that say no secret, stay.
func TestQuotedAssignmentWithBlanks(t *testing.T) {
	out := "+ export 'DB_PASSWORD=" + "correct horse battery staple'\n" +
		`docker run -e "POSTGRES_PASSWORD=` + `tr0ub4dor and 3" -e "MSG=hello world" postgres` + "\n" +
		`helm install x --set "auth.password=` + `two words,replicas=2"` + "\n"
	want := "+ export 'DB_PASSWORD=[REDACTED:password]'\n" +
		`docker run -e "POSTGRES_PASSWORD=[REDACTED:password]" -e "MSG=hello world" postgres` + "\n" +
		`helm install x --set "auth.password=[REDACTED:password],replicas=2"` + "\n"
	assert.Equal(t, want, writtenStdout(t, out))
	kept := `echo "PASSWORD=$DB_PASSWORD is set" 'token=' + tok` + "\n"
	assert.Equal(t, kept, writtenStdout(t, kept), "a reference, an empty value")
}

// TestGoogleOAuthAccessToken: `gcloud auth print-access-token` prints a
// Google OAuth access token, ya29. and base64url (a service account's in
// parts apart by dots); it is cut bare, in output and on a command line.
func TestGoogleOAuthAccessToken(t *testing.T) {
	user := "ya29." + "a0AfB_byC1kQ9vLmN2pR7sT1uW4yZ-abcdefghijklmnopqrstuv0123456789"
	sa := "ya29." + "c.c0ASRK0GaY7xQ2mLp9Vn4Rt6Wb8Zc1Df3Gh5Jk7Lm9Np"
	out := user + "\n" + sa + "\ncurl -H \"X-Goog-User-Project: p\" -d @q.json https://x?access_token=" + user + "\n"
	want := "[REDACTED:google_oauth_token]\n[REDACTED:google_oauth_token]\ncurl -H \"X-Goog-User-Project: p\" -d @q.json https://x?access_token=[REDACTED:google_oauth_token]\n"
	assert.Equal(t, want, writtenStdout(t, out))
	kept := "ya29.short\nya29.abcdefghijklmnopqrstuvwxyz\n"
	assert.Equal(t, kept, writtenStdout(t, kept), "too short; lower-case words")
}

// TestAIVendorKeys: the keys of the AI vendors an agent's sandbox tends to
// hold beside OpenAI's and Anthropic's (Groq, xAI, Replicate, LangSmith)
// are cut bare, in output and in an assignment; model and package names
// with those prefixes stay.
func TestAIVendorKeys(t *testing.T) {
	out := redacttest.GroqKey + "\n" + redacttest.XAIKey + "\nusing " + redacttest.ReplicateToken + " now\n" +
		"LANGCHAIN_ENDPOINT=x LS=" + redacttest.LangSmithKey + "\n"
	want := "[REDACTED:groq_key]\n[REDACTED:xai_key]\nusing [REDACTED:replicate_token] now\n" +
		"LANGCHAIN_ENDPOINT=x LS=[REDACTED:langsmith_key]\n"
	assert.Equal(t, want, writtenStdout(t, out))
	kept := "model xai-grok-2-latest via gsk_client\nr8_default lsv2_pt_config\n"
	assert.Equal(t, kept, writtenStdout(t, kept), "names, not keys")
}
