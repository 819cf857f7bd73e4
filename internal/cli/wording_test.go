package cli

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// A count of one reads in the singular.
func TestVerifyOneUnsealedLineReadsSingular(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 20)
	s, _ := op(sessionA, "exec", "f000000000000001", 9001, 9002)
	appendFlocked(t, path, canonLines(s))
	res := run(t, "", "verify", "--key", pub, filepath.Dir(path))
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stdout, ": integrity: 1 line after the newest checkpoint is not sealed (")
	require.NotRegexp(t, `[^=\w]1 lines[^=]`, res.stdout)
}

// One unwitnessed line accepted reads in the singular too.
func TestVerifyOneAcceptedUnwitnessedLineReadsSingular(t *testing.T) {
	path, keyPath, pubPath, wkeys, _ := witnessedFixture(t)
	s, _ := op(sessionB, "stop", "b000000000000009", 3, 4)
	appendFlocked(t, path, canonLines(s))
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second})
	require.NoError(t, err)
	require.NoError(t, sealer.Seal(context.Background(), path))
	res := run(t, "", "verify", "--allow-open", "--key", pubPath, "--witness", wkeys[0], "--witness", wkeys[1], "--allow-unwitnessed", "1", path)
	require.Equal(t, 0, res.code, res.stdout)
	require.Contains(t, res.stdout, "accepting 1 unwitnessed line (--allow-unwitnessed 1)")
}

// A log of one line handed over reads in the singular.
func TestHandoverOfOneLineReadsSingular(t *testing.T) {
	dir := t.TempDir()
	oldKey, oldPub := keyFiles(t, "cli-test")
	_, nextPub := keyFiles(t, "cli-test-2027")
	path := filepath.Join(dir, "audit.jsonl")
	s, _ := op(sessionA, "exec", "a000000000000001", 1, 2)
	appendFlocked(t, path, canonLines(s))
	require.NoError(t, sealWith(t, path, oldKey))

	res := run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", nextPub, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, `the log "cli-test/audit.jsonl" ends at 1 line;`)
	res = run(t, "", "verify", "--key", oldPub, "--allow-open", retiredOf(t, path))
	require.Contains(t, res.stdout, `: handover: final at 1 line; the log goes on as`)
	require.NotRegexp(t, `[^=\w]1 lines[^=]`, res.stdout)
}
