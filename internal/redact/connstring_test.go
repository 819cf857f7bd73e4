package redact

import "testing"

// TestShellPWDAfterASemicolonStays: in a shell line, PWD= after a ';' sets
// the working directory: the command before the ';' is no key=value pair,
// or the value is a directory and a command follows it. Pwd= in a
// connection string, after a pair, is cut.
func TestShellPWDAfterASemicolonStays(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertKept(t, r,
		"cd /srv; PWD=/tmp make",
		"cd /srv;PWD=/tmp make",
		"ls; PWD=/tmp",
		"export A=1; PWD=/tmp make",
		`bash -c "cd /srv; PWD=/tmp make"`,
		"X=1; PWD=~/work ./run.sh",
	)
	assertCountedCuts(t, r, []countedCut{
		{"Server=db;Uid=sa;Pwd=" + "Tr0ub4dor;Encrypt=yes", "Server=db;Uid=sa;Pwd=[REDACTED:password];Encrypt=yes", 1},
		{"Server=db; User Id=sa; PWD=" + "q8Zr2LmN5pX7", "Server=db; User Id=sa; PWD=[REDACTED:password]", 1},
		{`sqlcmd "Driver={ODBC Driver 18};Uid=sa;Pwd=` + `/Xk9q2;"`, `sqlcmd "Driver={ODBC Driver 18};Uid=sa;Pwd=[REDACTED:password];"`, 1},
		{"Uid=sa;Pwd=" + "/Xk9q2", "Uid=sa;Pwd=[REDACTED:password]", 1},
	})
}
