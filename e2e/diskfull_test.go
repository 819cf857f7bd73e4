package e2e

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFullDiskRefusesWholeBatches: the audit file lives on a 64 KiB tmpfs.
// A client posts 50-event batches until the collector has refused five of
// them (503: the disk is full). Every refused batch is gone from the file:
// it holds exactly the accepted batches, whole, and verify passes. Needs
// root to mount the tmpfs; skipped otherwise.
func TestFullDiskRefusesWholeBatches(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	mnt := filepath.Join(dir, "small")
	require.NoError(t, os.Mkdir(mnt, 0o700))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	addr := freeAddr(t)
	audit := filepath.Join(mnt, "audit.jsonl")
	col := startCollector(t, "collector", filepath.Join(dir, "col"), crashCentralConfig(addr, audit), addr)

	client := &http.Client{Timeout: 30 * time.Second}
	accepted, refused := 0, 0
	for b := 0; b < 100 && refused < 5; b++ {
		body, _ := crashBatch(b)
		resp, err := client.Post("http://"+addr+"/v1/sandbox/events", "application/x-ndjson", bytes.NewReader(body))
		require.NoError(t, err)
		_ = resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			accepted++
		case http.StatusServiceUnavailable:
			refused++
		default:
			t.Fatalf("batch %d: status %d", b, resp.StatusCode)
		}
	}
	col.stop(t)
	require.Equal(t, 5, refused, "the disk never filled up")
	require.Positive(t, accepted)
	raw := mustRead(t, audit)
	assert.Equal(t, 50*accepted, bytes.Count(raw, []byte("\n")), "lines of refused batches in the file")
	assert.True(t, len(raw) > 0 && raw[len(raw)-1] == '\n', "torn last line")
	code, out := runCLI(t, "verify", audit)
	assert.Equal(t, 0, code, "verify:\n%s", indent(out))
	t.Logf("accepted %d batches, refused %d; verify: %s", accepted, refused, out)
}
