package e2e

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// checkpointSizes returns the sizes of the checkpoints in the sidecar of
// auditPath, each checked against the key in pubPath; none when the
// sidecar is missing.
func checkpointSizes(t *testing.T, auditPath, pubPath string) []int64 {
	t.Helper()
	v, err := integrity.LoadVerifierKey(pubPath)
	require.NoError(t, err)
	f, err := os.Open(integrity.CheckpointsPath(auditPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	var sizes []int64
	for nr := integrity.NewNoteReader(f); ; {
		rec, err := nr.Next()
		if errors.Is(err, io.EOF) {
			return sizes
		}
		require.NoError(t, err)
		c, err := integrity.OpenCheckpoint(rec, v)
		require.NoError(t, err)
		sizes = append(sizes, c.N)
	}
}

// killThenRestartSeals SIGKILLs col, whose 10 lines in auditPath no round
// sealed, and checks that verify finds them unsealed after the first
// checkpoint (of 0 lines), and that a restart seals them so the file
// verifies.
func killThenRestartSeals(t *testing.T, col *collector, dir, cfg, sandboxAddr, auditPath, pubPath string) {
	t.Helper()
	require.NoError(t, col.cmd.Process.Kill())
	<-col.done

	code, out := runCLI(t, "verify", "--key", pubPath, auditPath)
	require.NotEqual(t, 0, code, out)
	require.Contains(t, out, "integrity: lines=10 sealed=0 unsealed=10 checkpoints=1")

	col2 := startCollector(t, "collector-restarted", filepath.Join(dir, "restart"), cfg, sandboxAddr)
	col2.stop(t)
	code, out = runCLI(t, "verify", "--key", pubPath, auditPath)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "integrity: lines=10 sealed=10 unsealed=0 checkpoints=2")
	require.Equal(t, []int64{0, 10}, checkpointSizes(t, auditPath, pubPath))
}

// TestKilledBeforeTheFirstSealStartsAgain: a collector with integrity on
// is SIGKILLed after it wrote its first lines and before its first round
// sealed them. The log's first checkpoint (of 0 lines) was signed at
// start, so the restart seals the lines as its extension, and the trail
// verifies with the key.
func TestKilledBeforeTheFirstSealStartsAgain(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	sandboxAddr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	// No round within the test: only the start seals.
	cfg := integrityConfig(sandboxAddr, auditPath, keyPath, "1h")
	col := startCollector(t, "collector", dir, cfg, sandboxAddr)
	require.Equal(t, []int64{0}, checkpointSizes(t, auditPath, pubPath), "the new log's first checkpoint, signed at start")

	postLines(t, sandboxAddr, pairLines(uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"), 5))
	waitLines(t, auditPath, 10)
	killThenRestartSeals(t, col, dir, cfg, sandboxAddr, auditPath, pubPath)
}

// TestTemplatedFileKilledBeforeItsFirstSeal: with a templated path, a new
// session's file gets its first checkpoint, of 0 lines, before its first
// line. A collector SIGKILLed before the round that seals the lines
// leaves history the file extends: the restart seals them, and the trail
// verifies with the key.
func TestTemplatedFileKilledBeforeItsFirstSeal(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	sandboxAddr := freeAddr(t)
	const sid = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	template := filepath.Join(dir, "audit", "{session_id}.jsonl")
	auditPath := filepath.Join(dir, "audit", sid+".jsonl")
	// No round within the test: only the file's creation and the start seal.
	cfg := integrityConfig(sandboxAddr, template, keyPath, "1h")
	col := startCollector(t, "collector", dir, cfg, sandboxAddr)
	postLines(t, sandboxAddr, pairLines(uuid.MustParse(sid), 5))
	waitLines(t, auditPath, 10)
	require.Equal(t, []int64{0}, checkpointSizes(t, auditPath, pubPath), "the new file's first checkpoint, signed before its first line")
	killThenRestartSeals(t, col, dir, cfg, sandboxAddr, auditPath, pubPath)
}
