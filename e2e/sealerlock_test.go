package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpoolStartsBesideALeftSealerLock: a collector sealing a file fails
// at start after its exporter made the file's .sealer.lock and signed the
// new log's first checkpoint (its receiver's address is taken); the lock
// file stays on disk. A spool at that path is refused while the signed
// log lies beside it; once its sidecars are moved away, a collector with
// its spool at that path starts: a lock file no sealer holds, with no
// signed log beside it, is not an audit file.
func TestSpoolStartsBesideALeftSealerLock(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	code, out := runCLI(t, "keygen", "--name", "e2e", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, 0, code, out)
	path := filepath.Join(dir, "audit", "events.jsonl")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = taken.Close() }()
	sealed := fmt.Sprintf(`receivers:
  sandboxaudit: {endpoint: %s}
exporters:
  sandboxaudit:
    file:
      path: %s
      integrity: {signing_key_file: %s}
service:
  pipelines:
    logs: {receivers: [sandboxaudit], exporters: [sandboxaudit]}
`, taken.Addr(), path, filepath.Join(dir, "keys", "e2e.key"))
	res := startRefused(t, dir, sealed)
	require.FileExists(t, path+".sealer.lock", "the exporter starts before the receiver; the collector said: %s", res)
	require.FileExists(t, path+".checkpoints", "the new log's first checkpoint")
	for _, suffix := range []string{".tlog", ".checkpoints"} {
		require.NoError(t, os.Rename(path+suffix, path+".old"+suffix))
	}

	addr := freeAddr(t)
	spoolOnly := fmt.Sprintf(`receivers:
  sandboxaudit: {endpoint: %s}
exporters:
  sandboxaudit:
    http:
      endpoint: http://%s/ingest
      spool: {path: %s}
service:
  pipelines:
    logs: {receivers: [sandboxaudit], exporters: [sandboxaudit]}
`, addr, freeAddr(t), path)
	col := startCollector(t, "spool", filepath.Join(dir, "col"), spoolOnly, addr)
	col.stop(t)
	assert.FileExists(t, path+".offset", "the spool is at the path")
}
