package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// dataCase is a data object and what redaction makes of it.
type dataCase struct{ in, want string }

func assertData(t *testing.T, r *Redactor, cases []dataCase) {
	t.Helper()
	for _, tc := range cases {
		got, _ := r.Data(auditevent.MustParseData(tc.in), nil)
		assert.Equal(t, auditevent.MustParseData(tc.want).String(), got.String(), "from %s", tc.in)
	}
}

// assertStrings redacts each case's text as a string; an empty want means
// the text stays as it is.
func assertStrings(t *testing.T, r *Redactor, cases []dataCase) {
	t.Helper()
	for _, tc := range cases {
		want := tc.want
		if want == "" {
			want = tc.in
		}
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, want, got, "from %q", tc.in)
	}
}

// TestShellLinePrefixAssignment: an exec's command given as one string,
// and the script after a shell's -c, are shell lines: a secret assigned
// before the command (PGPASSWORD=x psql ...) ends at the blank, and the
// command stays readable. An argv element after env holds its value whole.
func TestShellLinePrefixAssignment(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertData(t, r, []dataCase{
		{`{"command":["bash","-lc","PGPASSWORD=S3cretPw0rd psql -h db -U app -c 'select 1'"]}`,
			`{"command":["bash","-lc","PGPASSWORD=[REDACTED:password] psql -h db -U app -c 'select 1'"]}`},
		{`{"command":["sh","-c","GITHUB_TOKEN=` + ghToken + ` gh pr create --title fix"]}`,
			`{"command":["sh","-c","GITHUB_TOKEN=[REDACTED:github_token] gh pr create --title fix"]}`},
		{`{"command":["DB_PASSWORD=S3cretPw0rd ./migrate up"],"shell":true}`,
			`{"command":["DB_PASSWORD=[REDACTED:password] ./migrate up"],"shell":true}`},
		{`{"command":"API_KEY='a b' ./run.sh","shell":true}`,
			`{"command":"API_KEY='[REDACTED:api_key]' ./run.sh","shell":true}`},
		{`{"command":["env","DB_PASSWORD=correct horse battery","./run"]}`,
			`{"command":["env","DB_PASSWORD=[REDACTED:password]","./run"]}`},
		{`{"command":["tool","--password=correct horse"]}`,
			`{"command":["tool","--password=[REDACTED:password]"]}`},
	})
}

// TestToolPasswordFlags: the short flags that take a password in the tools
// agents run with one (mysql -pX, docker login -p X, sshpass, redis-cli -a,
// ssh-keygen -N, curl -u user:password ...) are cut after the tool's word,
// on a line or in an argv; the same letters of other commands stay.
func TestToolPasswordFlags(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	const pw = "S3cretPw0rd"
	const cut = "[REDACTED:password]"
	assertStrings(t, r, []dataCase{
		{"mysql -u root -p" + pw + " mydb", "mysql -u root -p" + cut + " mydb"},
		{"/usr/bin/mysqldump -uroot -p'" + pw + "' db > d.sql", "/usr/bin/mysqldump -uroot -p'" + cut + "' db > d.sql"},
		{"docker login -u alice -p " + pw + " registry.example.com", "docker login -u alice -p " + cut + " registry.example.com"},
		{"az login --service-principal -u app -p " + pw + " --tenant t", "az login --service-principal -u app -p " + cut + " --tenant t"},
		{"sshpass -p " + pw + " ssh -p 2222 host", "sshpass -p " + cut + " ssh -p 2222 host"},
		{"redis-cli -h cache -a " + pw + " ping", "redis-cli -h cache -a " + cut + " ping"},
		{"ssh-keygen -p -P old" + pw + " -N new" + pw + " -f key", "ssh-keygen -p -P " + cut + " -N " + cut + " -f key"},
		{"openssl enc -aes-256-cbc -k " + pw + " -in f", "openssl enc -aes-256-cbc -k " + cut + " -in f"},
		{"unzip -P " + pw + " backup.zip && 7z x -p" + pw + " b.7z", "unzip -P " + cut + " backup.zip && 7z x -p" + cut + " b.7z"},
		{"ldapsearch -x -D cn=admin -w " + pw + " -s sub", "ldapsearch -x -D cn=admin -w " + cut + " -s sub"},
		{"mongosh -u admin -p " + pw + " --authenticationDatabase admin", "mongosh -u admin -p " + cut + " --authenticationDatabase admin"},
		{"curl -u admin:" + pw + " http://localhost:8080/api", "curl -u admin:" + cut + " http://localhost:8080/api"},
		{"curl -s --user 'admin:" + pw + "' http://x", "curl -s --user 'admin:" + cut + "' http://x"},
		{"curl -u " + ghToken + ":x-oauth-basic https://api.github.com", "curl -u [REDACTED:github_token]:" + cut + " https://api.github.com"},
		{"sqlcmd -S db -U sa -P " + pw + " -Q 'select 1'", "sqlcmd -S db -U sa -P " + cut + " -Q 'select 1'"},
		// other commands' -p, -a, -u, -k, -w, -N, -P
		{"mkdir -p /tmp/a && ssh -p 2222 host && docker run -p 8080:80 nginx", ""},
		{"mysql -u root -p mydb", ""},
		{"mysql -u root -p\nls -a /tmp", ""},
		{"docker login -u alice --password-stdin registry.example.com", ""},
		{"login -p -h host alice", ""},
		{"mysql -h db -e 'select 1'; ssh -p 22 h", ""},
		{"curl -u alice https://x", ""},
		{"curl -u alice:$PASSWORD https://x", ""},
		{"git add -u && head -n 5 f && grep -w word f && ls -a", ""},
		{"use mysql -p to be prompted", ""},
		{"gh auth login -p ssh -h github.com && gh auth login -p https", ""},
		{"ldapsearch -x -H ldap://h -b dc=example,dc=com '(uid=x)'", ""},
		{"ldapsearch -b dc=x; curl -b sid=abc https://x", "ldapsearch -b dc=x; curl -b sid=[REDACTED:cookie] https://x"},
	})
	assertData(t, r, []dataCase{
		{`{"command":["mysql","-uroot","-p` + pw + `","db"]}`, `{"command":["mysql","-uroot","-p` + cut + `","db"]}`},
		{`{"command":["docker","login","-u","alice","-p","` + pw + `","r.example.com"]}`, `{"command":["docker","login","-u","alice","-p","` + cut + `","r.example.com"]}`},
		{`{"command":["sshpass","-p","` + pw + `","ssh","h"]}`, `{"command":["sshpass","-p","` + cut + `","ssh","h"]}`},
		{`{"command":["redis-cli","-a","` + pw + `","ping"]}`, `{"command":["redis-cli","-a","` + cut + `","ping"]}`},
		{`{"command":["curl","-u","alice:` + pw + `","https://x"]}`, `{"command":["curl","-u","alice:` + cut + `","https://x"]}`},
		{`{"command":["curl","--user","alice:` + pw + `","https://x"]}`, `{"command":["curl","--user","alice:` + cut + `","https://x"]}`},
		{`{"command":["bash","-lc","mysql -uroot -p` + pw + ` db < dump.sql"]}`, `{"command":["bash","-lc","mysql -uroot -p` + cut + ` db < dump.sql"]}`},
		{`{"command":["mkdir","-p","/tmp/a"]}`, `{"command":["mkdir","-p","/tmp/a"]}`},
		{`{"command":["mysql","-p","db"]}`, `{"command":["mysql","-p","db"]}`},
		{`{"command":["docker","run","-p","8080:80","nginx"]}`, `{"command":["docker","run","-p","8080:80","nginx"]}`},
		{`{"a":["mysql"],"b":["-p","x"]}`, `{"a":["mysql"],"b":["-p","x"]}`},
		{`{"command":["gh","auth","login","-p","ssh"]}`, `{"command":["gh","auth","login","-p","ssh"]}`},
		{`{"command":["ldapsearch","-b","dc=example,dc=com"]}`, `{"command":["ldapsearch","-b","dc=example,dc=com"]}`},
	})
}

// TestNamesAgentsMeet: Rails' SECRET_KEY_BASE, MYSQL_PWD and DB_PWD are
// secrets; PWD and OLDPWD are the working directory. openssl's pass:SECRET
// keeps its scheme, and its env:, file:, fd: and stdin arguments say where
// the secret is without holding it.
func TestNamesAgentsMeet(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertStrings(t, r, []dataCase{
		{"SECRET_KEY_BASE=9f8e7d6c5b4a", "SECRET_KEY_BASE=[REDACTED:secret]"},
		{"export MYSQL_PWD=hunter2x", "export MYSQL_PWD=[REDACTED:password]"},
		{"db_pwd: hunter2x", "db_pwd: [REDACTED:password]"},
		{"PWD=/app\nOLDPWD=/home\npwd: /app", ""},
		{"openssl rsa -in k.pem -passin pass:hunter2x -out k2.pem", "openssl rsa -in k.pem -passin pass:[REDACTED:password] -out k2.pem"},
		{"openssl rsa -passin env:KEY_PASS -passout file:/run/pw -pass fd:3 -passin stdin", ""},
	})
	assertData(t, r, []dataCase{
		{`{"env":{"MYSQL_PWD":"hunter2x","PWD":"/app"}}`, `{"env":{"MYSQL_PWD":"[REDACTED:password]","PWD":"/app"}}`},
		{`{"command":["openssl","rsa","-passin","pass:hunter2x","-passout","env:OUT_PW"]}`,
			`{"command":["openssl","rsa","-passin","pass:[REDACTED:password]","-passout","env:OUT_PW"]}`},
	})
}

// TestAuthorizationInPython: a Python f-string (or a bytes or raw one) after an
// Authorization name is a literal whose prefix is no credential; a
// placeholder inside it stays, a token is cut.
func TestAuthorizationInPython(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertStrings(t, r, []dataCase{
		{`headers = {"Authorization": f"Bearer {token}"}`, ""},
		{`headers={"Authorization": f"token {os.environ['GITHUB_TOKEN']}"}`, ""},
		{`h = {"Authorization": f"Bearer abcdef0123456789xyz"}`, `h = {"Authorization": f"Bearer [REDACTED:bearer_token]"}`},
		{`h = {'Authorization': b'Basic dXNlcjpwYXNzd29yZA=='}`, `h = {'Authorization': b'Basic [REDACTED:basic_auth]'}`},
	})
}

// TestPackageRegistryTokens: npm and PyPI tokens, which agents meet when
// they publish, are cut wherever they stand, as their own kinds.
func TestPackageRegistryTokens(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	npm, pypi := redacttest.NPMToken, redacttest.PyPIToken
	for _, tc := range []struct {
		in, want string
		kind     Kind
	}{
		{"//registry.npmjs.org/:_authToken=" + npm + "\n", "//registry.npmjs.org/:_authToken=[REDACTED:npm_token]\n", KindNPMToken},
		{"echo " + npm + " > t", "echo [REDACTED:npm_token] > t", KindNPMToken},
		{"twine upload -u __token__ -p " + pypi + " dist/*", "twine upload -u __token__ -p [REDACTED:pypi_token] dist/*", KindPyPIToken},
		{"[pypi]\n  username = __token__\n  password = " + pypi + "\n", "[pypi]\n  username = __token__\n  password = [REDACTED:pypi_token]\n", KindPyPIToken},
		{"uv publish --token " + pypi, "uv publish --token [REDACTED:pypi_token]", KindPyPIToken},
		{"x " + pypi + " y", "x [REDACTED:pypi_token] y", KindPyPIToken},
	} {
		var c Counts
		got, _ := r.String(tc.in, &c)
		assert.Equal(t, tc.want, got, "from %q", tc.in)
		assert.Equal(t, 1, c[tc.kind], "counts %v", c)
	}
	for _, s := range []string{"npm_config_cache=/tmp/npm", "npm_package_version_1234567890abcdefghij", "pypi-simple-index", "pip install pypi-AgE"} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}

// TestConfigSet: "config set NAME VALUE" stores a secret under a name that
// is no flag (aws configure set, npm/yarn/git config set); the value after
// a secret name there is cut, other settings stay.
func TestConfigSet(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertStrings(t, r, []dataCase{
		{"aws configure set aws_secret_access_key " + awsSecret + " --profile dev", "aws configure set aws_secret_access_key [REDACTED:aws_secret_key] --profile dev"},
		{"npm config set //registry.npmjs.org/:_authToken abc123def456", "npm config set //registry.npmjs.org/:_authToken [REDACTED:token]"},
		{"yarn config set npmAuthToken abc123def456 -H", "yarn config set npmAuthToken [REDACTED:token] -H"},
		{"git config set --global user.password hunter2x", "git config set --global user.password [REDACTED:password]"},
		{"aws configure set region us-east-1 && npm config set registry https://r.example.com", ""},
		{"aws configure set aws_access_key_id " + awsKeyID, "aws configure set aws_access_key_id [REDACTED:aws_access_key]"},
		{"please set token value in the UI", ""},
	})
	assertData(t, r, []dataCase{
		{`{"command":["aws","configure","set","aws_secret_access_key","` + awsSecret + `"]}`,
			`{"command":["aws","configure","set","aws_secret_access_key","[REDACTED:aws_secret_key]"]}`},
		{`{"command":["npm","config","set","//registry.npmjs.org/:_authToken","abc123def456"]}`,
			`{"command":["npm","config","set","//registry.npmjs.org/:_authToken","[REDACTED:token]"]}`},
		{`{"command":["aws","configure","set","region","us-east-1"]}`, `{"command":["aws","configure","set","region","us-east-1"]}`},
		{`{"command":["aws","configure","set","aws_secret_access_key"]}`, `{"command":["aws","configure","set","aws_secret_access_key"]}`},
		{`{"a":["config","set"],"b":["token","x"]}`, `{"a":["config","set"],"b":["token","x"]}`},
		{`{"command":["git","config","set","--global","user.password","hunter2x"]}`, `{"command":["git","config","set","--global","user.password","[REDACTED:password]"]}`},
	})
}

// TestAzureSAS: the signature of an Azure shared access signature grants
// its access alone; it is cut from SAS URLs (azcopy) and connection
// strings, and a sig parameter of another query stays.
func TestAzureSAS(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	const sig = "abcDEF123%2Bxyz%2F0%3D"
	assertStrings(t, r, []dataCase{
		{`azcopy copy f "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&ss=b&srt=o&sp=rwc&se=2026-01-01T00:00:00Z&sig=` + sig + `"`,
			`azcopy copy f "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&ss=b&srt=o&sp=rwc&se=2026-01-01T00:00:00Z&sig=[REDACTED:token]"`},
		{"https://a.blob.core.windows.net/c?sp=r&st=2026&sv=2022-11-02&sr=c&sig=" + sig + "&x=1",
			"https://a.blob.core.windows.net/c?sp=r&st=2026&sv=2022-11-02&sr=c&sig=[REDACTED:token]&x=1"},
		{"BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig=" + sig,
			"BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig=[REDACTED:token]"},
		{"https://example.com/img?w=10&sig=abc123", ""},
		{"gpg --verify x.sig=1", ""},
	})
	assertData(t, r, []dataCase{
		{`{"command":["azcopy","copy","f","https://a.blob.core.windows.net/c?sv=2022-11-02&sig=` + sig + `"]}`,
			`{"command":["azcopy","copy","f","https://a.blob.core.windows.net/c?sv=2022-11-02&sig=[REDACTED:token]"]}`},
		// No scheme, no secret name, no long run: only sv= lets it past the prefilter.
		{`{"path":"/c/f?sv=2022-11-02&sig=ab%2Bc"}`, `{"path":"/c/f?sv=2022-11-02&sig=[REDACTED:token]"}`},
	})
}
