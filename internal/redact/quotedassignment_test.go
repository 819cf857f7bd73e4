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
