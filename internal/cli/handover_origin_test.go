package cli

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// Nor may the new log take the origin of another log beside the path (a
// --next-origin that names the other file as the collector names it): verify
// would check that log, untouched, with the new key, and fail it.
func TestLogHandoverRefusesTheOriginOfALogBeside(t *testing.T) {
	path, keyPath, pubPath := sealedFixture(t)
	other := filepath.Join(filepath.Dir(path), "other.jsonl")
	s, f := op(sessionB, "exec", "b000000000000007", 3, 4)
	appendFlocked(t, other, canonLines(s, f))
	require.NoError(t, sealWith(t, other, keyPath))
	require.Equal(t, "cli-test/other.jsonl", integrity.FirstOrigin(other))

	_, nextPub := keyFiles(t, "cli-test-2027")
	res := run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", nextPub,
		"--next-origin", "cli-test/other.jsonl", path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, `--next-origin: "cli-test/other.jsonl" is the origin of the log at `+other)
	require.FileExists(t, path)
	require.NoFileExists(t, integrity.HandoverPath(path))
	res = run(t, "", "verify", "--key", pubPath, path, other)
	require.Equal(t, 0, res.code, "no final checkpoint was signed: %s", res.stdout)
}
