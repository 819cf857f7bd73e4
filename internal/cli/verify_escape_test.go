package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileName is a file name anyone who can create files in the audit
// directory can choose: ANSI escapes that move up and erase a line, an
// OSC 8 link, OSC 52 as C1 controls, a bidirectional override, and
// newlines that would begin lines of verify's own ("OK").
const hostileName = "a\x1b[1A\x1b[2K\x1b]8;;https:x\x1b\\\u009d52;c;eA\u009c\u202e\nOK\nb.jsonl"

// assertShownSafely checks that out holds no character that acts on a
// terminal or hides there, and names the file as show does.
func assertShownSafely(t *testing.T, out, name string) {
	t.Helper()
	assert.Empty(t, rawOnTerminal(out), "raw control or invisible character in %q", out)
	assert.NotContains(t, out, "\u202e")
	assert.Contains(t, out, displayText(name), "the name as escapes: %q", out)
	assert.False(t, slices.Contains(strings.Split(out, "\n"), "OK"), "a line forged by the name: %q", out)
}

func TestVerifyShowsHostileFileNamesAsEscapes(t *testing.T) {
	dir := t.TempDir()
	s, _ := op(sessionA, "exec", "a000000000000001", 1, 2)
	require.NoError(t, os.WriteFile(filepath.Join(dir, hostileName), []byte(canonLines(s)), 0o600))
	r := run(t, "", "verify", dir)
	require.Equal(t, exitProblems, r.code, r.stdout+r.stderr)
	assertShownSafely(t, r.stdout, hostileName)
	assert.Contains(t, r.stdout, displayText(hostileName)+":1: start without a finish")
	assert.True(t, strings.HasSuffix(r.stdout, "\nFAILED\n"), r.stdout)

	r = run(t, "", "verify", filepath.Join(dir, "gone"+hostileName))
	require.Equal(t, exitProblems, r.code, r.stdout+r.stderr)
	assertShownSafely(t, r.stderr, "gone"+hostileName)
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
}

// A span id is shown as show shows it, so it can be given to show --span.
func TestVerifyShowsHostileSpanIDsAsEscapes(t *testing.T) {
	s, _ := op(sessionA, "exec", hostileSpan, 1, 2)
	r := run(t, "", "verify", writeFile(t, "events.jsonl", canonLines(s)))
	require.Equal(t, exitProblems, r.code, r.stdout+r.stderr)
	assert.Empty(t, rawOnTerminal(r.stdout), "raw control or invisible character in %q", r.stdout)
	assert.Contains(t, r.stdout, `span_id "`+displayText(hostileSpan)+`"`)
}

// hostileSealedFixture is a sealed audit file under a hostile name, and
// the verifier key of its log.
func hostileSealedFixture(t *testing.T) (path, keyPath, pubPath string) {
	t.Helper()
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, exitOK, res.code, res.stderr)
	keyPath, pubPath = filepath.Join(dir, "keys", "cli-test.key"), filepath.Join(dir, "keys", "cli-test.pub")
	path = filepath.Join(dir, hostileName)
	s, f := op(sessionA, "exec", "a000000000000001", 1, 2)
	appendFlocked(t, path, canonLines(s, f))
	require.NoError(t, sealWith(t, path, keyPath))
	return path, keyPath, pubPath
}

func TestVerifyKeyShowsHostileFileNamesAsEscapes(t *testing.T) {
	path, _, pub := hostileSealedFixture(t)
	appendFlocked(t, path, "x\n") // an unsealed line, and not an event
	r := run(t, "", "verify", "--key", pub, filepath.Dir(path))
	require.Equal(t, exitProblems, r.code, r.stdout+r.stderr)
	assertShownSafely(t, r.stdout, path)
	assert.Contains(t, r.stdout, displayText(path)+": integrity:")
}

// The other commands that name files print them as verify does.
func TestCommandsShowHostileFileNamesAsEscapes(t *testing.T) {
	path, keyPath, pub := hostileSealedFixture(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "gone"+hostileName)
	outDir := filepath.Join(dir, "keys"+hostileName)
	for _, tc := range []struct {
		args []string
		name string
		out  func(result) string
	}{
		{[]string{"prove", path, "--line", "9"}, path, stderrOf},
		{[]string{"verify-proof", "--key", pub, missing}, missing, stderrOf},
		{[]string{"keygen", "--name", "k", "--out", outDir}, outDir, stdoutOf},
		{[]string{"replay", missing, "--endpoint", "http://127.0.0.1:1/"}, missing, stderrOf},
		{[]string{"log", "reset", "--signing-key", keyPath, path}, path, stdoutOf},
		{[]string{"log", "rebuild-store", "--key", pub, missing}, missing, stderrOf},
	} {
		r := run(t, "", tc.args...)
		assert.Empty(t, rawOnTerminal(r.stdout+r.stderr), "%v: raw control or invisible character in %q", tc.args, r.stdout+r.stderr)
		assert.NotContains(t, r.stdout+r.stderr, "\u202e", tc.args)
		assert.Contains(t, tc.out(r), displayText(tc.name), "%v: the name as escapes: %q", tc.args, r.stdout+r.stderr)
	}
}

func stdoutOf(r result) string { return r.stdout }
func stderrOf(r result) string { return r.stderr }
