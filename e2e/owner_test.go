package e2e

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestOneCollectorSealsALog: a second collector configured with integrity
// on the file a running one seals fails at start with an ERROR naming the
// path, and `sandboxaudit log rebuild-store` refuses to rewrite the store
// under the running one. The Python writer appends meanwhile, unhindered.
// Once the first collector stopped, the command runs and the log verifies.
func TestOneCollectorSealsALog(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	addrs := freeAddrs(t, 2)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", filepath.Join(dir, "1"), integrityConfig(addrs[0], auditPath, keyPath, "200ms"), addrs[0])
	postLines(t, addrs[0], pairLines(uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"), 4))
	waitLines(t, auditPath, 8)

	out := startRefused(t, filepath.Join(dir, "2"), integrityConfig(addrs[1], auditPath, keyPath, "200ms"))
	require.Contains(t, out, "error")
	require.Contains(t, out, auditPath+": another collector (or a sandboxaudit log command) is sealing its log")

	code, rout := runCLI(t, "log", "rebuild-store", "--key", pubPath, auditPath)
	require.Equal(t, 1, code, rout)
	require.Contains(t, rout, "a collector is sealing "+auditPath)

	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	pyOut, err := runPythonSink(ctx, auditPath, pythonLines(t, dir, uuid.MustParse("0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e"), 2), 0).CombinedOutput()
	require.NoError(t, err, "%s", pyOut)
	waitLines(t, auditPath, 12)
	col.stop(t)

	code, rout = runCLI(t, "log", "rebuild-store", "--key", pubPath, auditPath)
	require.Equal(t, 0, code, rout)
	code, vout := runCLI(t, "verify", "--key", pubPath, filepath.Dir(auditPath))
	require.Equal(t, 0, code, vout)
	require.Contains(t, vout, "lines=12 sealed=12 unsealed=0")
}
