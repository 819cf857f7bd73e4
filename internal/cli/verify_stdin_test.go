package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// stdinDir makes a working directory where "-" could be mistaken for a
// path: an audit file named "-" with the sidecar that makes it a trail, an
// unrelated file and a directory no one may read. It returns the stdin
// lines (one operation) and chdirs there.
func stdinDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s1, f1 := op(sessionB, "exec", "00f067aa0ba902b7", 1, 2)
	s2, f2 := op(sessionB, "read", "00f067aa0ba902b8", 3, 4)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "-"), []byte(canonLines(s1, f1, s2, f2)), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "-.segments"), []byte("not a segment record\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("unrelated\n"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "locked"), 0o000))
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "locked"), 0o700) })
	t.Chdir(dir)
	start, finish := op(sessionA, "exec", "00f067aa0ba902b7", 1, 2)
	return canonLines(start, finish)
}

// TestVerifyStdinIsStdin: "-" is stdin whatever the working directory
// holds; what is verified is what came in on stdin.
func TestVerifyStdinIsStdin(t *testing.T) {
	stdin := stdinDir(t)
	res := run(t, stdin, "verify", "-")
	require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "files=1 lines=2 events=2 sessions=1 ")

	// With --key the checkpoints are read from beside the file, so stdin
	// is refused, before anything is read.
	keys := filepath.Join(t.TempDir(), "keys")
	require.Equal(t, exitOK, run(t, "", "keygen", "--name", "stdin-test", "--out", keys).code)
	res = run(t, stdin, "verify", "--key", filepath.Join(keys, "stdin-test.pub"), "-")
	require.Equal(t, exitUsage, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, "not stdin")
	require.Empty(t, res.stdout)
}

// TestVerifyAllTakesDashAsStdin: the verifier itself takes "-" as stdin
// with --key too, never as a trail at a path named "-".
func TestVerifyAllTakesDashAsStdin(t *testing.T) {
	stdin := stdinDir(t)
	var out strings.Builder
	keys := filepath.Join(t.TempDir(), "keys")
	require.Equal(t, exitOK, run(t, "", "keygen", "--name", "stdin-test", "--out", keys).code)
	key, err := integrity.LoadVerifierKey(filepath.Join(keys, "stdin-test.pub"))
	require.NoError(t, err)
	v := newVerifier(&out, verifyOptions{key: key})
	defer v.dropStdinSpool()
	files, listing, code := verifyFiles([]string{"-"}, false, true, nil, &out)
	require.Equal(t, exitOK, code, out.String())
	require.Equal(t, []string{"-"}, files)
	require.NoError(t, v.verifyAll(context.Background(), files, false, listing, strings.NewReader(stdin)), out.String())
	sum := v.finish()
	require.Equal(t, 2, sum.Lines, out.String())
	require.Equal(t, 1, sum.Sessions)
}
