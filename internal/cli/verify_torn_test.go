package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVerifyDirectorySkipsATornLineKeptAside: a torn last line the file
// sink cut off and kept in <file>.torn-<ns> was never acknowledged and is
// not part of the trail; verify on the directory names it and passes.
func TestVerifyDirectorySkipsATornLineKeptAside(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "00f067aa0ba902b7", 1, 2)
	active := writeFile(t, "events.jsonl", canonLines(s1, f1))
	dir := filepath.Dir(active)
	kept := active + ".torn-1796618487841304661"
	require.NoError(t, os.WriteFile(kept, []byte(canonLines(s1)[:40]), 0o600))
	// A name like it that is not CutTornTail's is still read.
	other := filepath.Join(dir, "events.jsonl.torn-old")

	r := run(t, "", "verify", dir)
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "files=1 lines=2 ")
	require.Contains(t, r.stderr, "skipping "+kept+", a torn last line")

	require.NoError(t, os.WriteFile(other, []byte("{oops"), 0o600))
	r = run(t, "", "verify", dir)
	require.Equal(t, exitProblems, r.code, r.stdout+r.stderr)
	require.True(t, strings.Contains(r.stdout, other), r.stdout)
}

// TestVerifyDirectoryReadsAnAuditFileNamedLikeATornLine: a session's audit
// file can be named like a kept torn line (a template ending in
// {session_id}, a session id ending in .torn-<digits>); it holds whole
// lines, which a kept torn line never does, so verify reads it, problems
// included, rather than pass over it.
func TestVerifyDirectoryReadsAnAuditFileNamedLikeATornLine(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "00f067aa0ba902b7", 1, 2)
	active := writeFile(t, "events.jsonl", canonLines(s1, f1))
	named := filepath.Join(filepath.Dir(active), "sess.torn-1796618487841304661")
	require.NoError(t, os.WriteFile(named, []byte("{oops\n"), 0o600))

	r := run(t, "", "verify", filepath.Dir(active))
	require.Equal(t, exitProblems, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, named)
	require.NotContains(t, r.stderr, "skipping")
}
