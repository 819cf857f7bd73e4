package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestQuotedScriptAssignmentEndsAtABlank: the quoted script of a shell's -c
// is a shell line, not one argument: its NAME=value prefix ends at a blank,
// and the command after it stays. A quoted argument elsewhere keeps its
// value to the closing quote.
func TestQuotedScriptAssignmentEndsAtABlank(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for in, want := range map[string]string{
		`bash -c "PGPASSWORD=` + `s3cretpw psql -h db -U app -c 'select 1'"`: `bash -c "PGPASSWORD=[REDACTED:password] psql -h db -U app -c 'select 1'"`,
		`su postgres -lc 'GITHUB_TOKEN=` + `abc123def gh api /user'`:         `su postgres -lc 'GITHUB_TOKEN=[REDACTED:token] gh api /user'`,
		`docker run -e "POSTGRES_PASSWORD=` + `tr0ub4dor and 3" postgres`:    `docker run -e "POSTGRES_PASSWORD=[REDACTED:password]" postgres`,
	} {
		got, _ := r.String(in, nil)
		assert.Equal(t, want, got, in)
	}
}

// TestQuotedAssignmentEndsBeforeTheNextPair: a quoted value with blanks
// ends before a blank and the next NAME=, as at a ',' or '&': logfmt's
// msg="token=… user=…" keeps its other pairs.
func TestQuotedAssignmentEndsBeforeTheNextPair(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for in, want := range map[string]string{
		`level=info msg="token=` + `abc123 refreshed for user=bob ip=10.0.0.1"`: `level=info msg="token=[REDACTED:token] user=bob ip=10.0.0.1"`,
		`env "API_KEY=` + `two words" "DEBUG=1"`:                                `env "API_KEY=[REDACTED:api_key]" "DEBUG=1"`,
		`docker run -e "DB_PASSWORD=` + `a b c.d=e" x`:                          `docker run -e "DB_PASSWORD=[REDACTED:password] c.d=e" x`,
	} {
		got, _ := r.String(in, nil)
		assert.Equal(t, want, got, in)
	}
}
