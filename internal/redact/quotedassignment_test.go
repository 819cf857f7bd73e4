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

// TestSSHRemoteCommandAssignmentEndsAtABlank: the quoted argument after
// ssh's host is the remote command, a shell line: its NAME=value prefix
// ends at a blank and the command after it stays. A quoted argument of
// another command keeps its value to the closing quote.
func TestSSHRemoteCommandAssignmentEndsAtABlank(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for in, want := range map[string]string{
		`ssh host "API_KEY=` + `x ./deploy.sh"`:                          `ssh host "API_KEY=[REDACTED:api_key] ./deploy.sh"`,
		`ssh -p 2222 deploy@web1 'DB_PASSWORD=` + `s3cr3t make migrate'`: `ssh -p 2222 deploy@web1 'DB_PASSWORD=[REDACTED:password] make migrate'`,
		`/usr/bin/ssh web1 "TOKEN=` + `abc123 ./run.sh --prod"`:          `/usr/bin/ssh web1 "TOKEN=[REDACTED:token] ./run.sh --prod"`,
		`cd /srv && ssh web1 "TOKEN=` + `abc123 ./run.sh"`:               `cd /srv && ssh web1 "TOKEN=[REDACTED:token] ./run.sh"`,
		`gcloud compute ssh vm --command="TOKEN=` + `abc123 ./run.sh"`:   `gcloud compute ssh vm --command="TOKEN=[REDACTED:token] ./run.sh"`,
		// not ssh's command: one argument, to the closing quote (an
		// argument of the remote words after the host, or of another
		// command)
		`ssh web1 docker run -e "DB_PASSWORD=` + `two words" x`:     `ssh web1 docker run -e "DB_PASSWORD=[REDACTED:password]" x`,
		`ssh -i key -o A=b web1 env "API_KEY=` + `two words"`:       `ssh -i key -o A=b web1 env "API_KEY=[REDACTED:api_key]"`,
		`ssh web1 ls; docker run -e "DB_PASSWORD=` + `two words" x`: `ssh web1 ls; docker run -e "DB_PASSWORD=[REDACTED:password]" x`,
		`nossh "API_KEY=` + `two words" x`:                          `nossh "API_KEY=[REDACTED:api_key]" x`,
	} {
		got, _ := r.String(in, nil)
		assert.Equal(t, want, got, in)
	}
}

// TestConfigFlagQuotedValueRunsToItsQuote: git's -c takes name=value, not
// a script: a quoted value with blanks is cut to its closing quote, as
// is one whose name is dotted (no shell variable has a dot). A shell's -c
// still ends the value at a blank.
func TestConfigFlagQuotedValueRunsToItsQuote(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for in, want := range map[string]string{
		`git -c "user.password=` + `a b" push`:                     `git -c "user.password=[REDACTED:password]" push`,
		`git -c 'credential.token=` + `a b c' fetch`:               `git -c 'credential.token=[REDACTED:token]' fetch`,
		`git -C repo -c "name.password=` + `two words" pull`:       `git -C repo -c "name.password=[REDACTED:password]" pull`,
		`/usr/bin/git -c "PASSWORD=` + `a b" clone x`:              `/usr/bin/git -c "PASSWORD=[REDACTED:password]" clone x`,
		`tool -c "db.password=` + `a b"`:                           `tool -c "db.password=[REDACTED:password]"`,
		`git pull && bash -c "GITHUB_TOKEN=` + `abc123 gh api /x"`: `git pull && bash -c "GITHUB_TOKEN=[REDACTED:token] gh api /x"`,
	} {
		got, _ := r.String(in, nil)
		assert.Equal(t, want, got, in)
	}
}

// TestDottedAssignmentArgvElementCutWhole: git's -c in an argv array takes
// name=value as one element; a dotted name's value, blanks and all, is the
// rest of the element, as an undotted one's is.
func TestDottedAssignmentArgvElementCutWhole(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertData(t, r, []dataCase{
		{`{"argv":["git","-c","user.password=` + `two words","push"]}`,
			`{"argv":["git","-c","user.password=[REDACTED:password]","push"]}`},
		{`{"argv":["java","-Dspring.datasource.password=` + `a b","-jar","app.jar"]}`,
			`{"argv":["java","-Dspring.datasource.password=[REDACTED:password]","-jar","app.jar"]}`},
	})
}
