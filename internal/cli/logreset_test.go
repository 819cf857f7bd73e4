package cli

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A torn last line, which the reset's seal cuts off the file, is reported
// with where it is kept: the operator sees the file change.
func TestLogResetSaysItCutATornLine(t *testing.T) {
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, 0, res.code, res.stderr)
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	path := writeFile(t, "audit.jsonl", canonLines(s1, f1)+`{"torn":`)
	res = run(t, "", "log", "reset", "--signing-key", filepath.Join(dir, "keys", "cli-test.key"), path)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "WARN integrity: repaired crash damage")
	require.Contains(t, res.stderr, "cut a torn last line (8 bytes) off; it is kept in audit.jsonl.torn-")
	require.Equal(t, canonLines(s1, f1), string(readFile(t, path)))
	kept, err := filepath.Glob(path + ".torn-*")
	require.NoError(t, err)
	require.Len(t, kept, 1)
	require.Equal(t, `{"torn":`, string(readFile(t, kept[0])))
}

func TestLogHandoverSaysItCutATornLine(t *testing.T) {
	path, oldKey, _, _, _ := witnessedFixture(t)
	_, newPub := keyFiles(t, "cli-test-2027")
	appendFlocked(t, path, `{"torn":`)
	res := run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", newPub, "--without-witnesses", path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, "WARN integrity: repaired crash damage")
	require.Contains(t, res.stderr, "cut a torn last line (8 bytes) off; it is kept in audit.jsonl.torn-")
	kept, err := filepath.Glob(path + ".torn-*")
	require.NoError(t, err)
	require.Len(t, kept, 1, "the torn line stays beside the path the new log starts at")
	require.Equal(t, `{"torn":`, string(readFile(t, kept[0])))
}
