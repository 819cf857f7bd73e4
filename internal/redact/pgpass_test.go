package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestGrepLineWithATimeIsNoPgpassLine: grep -n over a log in the working
// directory prints file:1234: before the line, and a time's hh:mm:ss gives
// the colons of a .pgpass line; a user that is a number says it is none.
// A .pgpass line is cut all the same.
func TestGrepLineWithATimeIsNoPgpassLine(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, s := range []string{
		"app.log:10234:2024-01-01T12:00:00Z started server\n",
		"notes.txt:1234:09:30:00 standup\n",
		"kafka-1:9092:orders:0:12345\n",
	} {
		got, _ := r.String(s, nil)
		assert.Equal(t, s, got)
	}
	got, _ := r.String("db.internal:5432:prod:app2:"+"Tr0ub4dorhk\n", nil)
	assert.Equal(t, "db.internal:5432:prod:app2:[REDACTED:password]\n", got)
}

// TestPgpassLineInData: a one-line .pgpass entry written as data, with no
// other trigger in the event, passes the prefilter (a port's last digit,
// ':' and the database's first byte) and is cut. Colons elsewhere (a
// time, a digest, a file:line:col) stay, and most do not even pass the
// prefilter.
func TestPgpassLineInData(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertData(t, r, []dataCase{
		{`{"data":"db.internal:5432:prod:app2:` + `Tr0ub4dorhk","path":"/home/u/.pg"}`,
			`{"data":"db.internal:5432:prod:app2:[REDACTED:password]","path":"/home/u/.pg"}`},
		{`{"data":"*:*:*:app:` + `Tr0ub4dorhk"}`, `{"data":"*:*:*:app:[REDACTED:password]"}`},
		{`{"data":"10.0.0.7:*:Orders:app:` + `Tr0ub4dorhk"}`, `{"data":"10.0.0.7:*:Orders:app:[REDACTED:password]"}`},
		{`{"bytes":52,"data":"db:6432:_main:app:` + `Tr0ub4dorhk"}`, `{"bytes":52,"data":"db:6432:_main:app:[REDACTED:password]"}`},
	})
	for _, s := range []string{
		`{"data":"12:30:00 started","path":"/tmp/x"}`,
		`{"data":"main.go:12:5: undefined: x"}`,
		`{"data":"kafka-1:9092:orders:0:12345"}`,
		`{"data":"img@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}`,
		`{"data":"2001:db8::1 up"}`,
		`{"data":"db:5432:9db:app:x"}`,
	} {
		d := auditevent.MustParseData(s)
		got, changed := r.Data(d, nil)
		assert.False(t, changed, "%s became %s", s, got.String())
	}
	for _, s := range []string{`{"data":"12:30:00 started","path":"/tmp/x"}`, `{"data":"main.go:12:5: undefined"}`} {
		assert.False(t, mayTrigger(s), "%s passes the prefilter", s)
	}
}
