package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
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
