package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
