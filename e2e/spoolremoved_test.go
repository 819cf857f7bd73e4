package e2e

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSpoolRemovedWhileRunningLosesNothing: while the endpoint is down, a
// cleaner removes the spool's whole directory, and the edge acknowledges
// more batches. The edge then gets SIGKILLed. The restarted edge delivers
// every acknowledged event once the endpoint is back, those spooled before
// the removal included. Meanwhile `sandboxaudit replay` on the same spool,
// whose .lock file went with the directory, is refused.
func TestSpoolRemovedWhileRunningLosesNothing(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addrs := freeAddrs(t, 2)
	edgeAddr, centralAddr := addrs[0], addrs[1]
	spoolDir := filepath.Join(dir, "edge", "spool")
	spool := filepath.Join(spoolDir, "spool.jsonl")
	cfg := crashEdgeConfig(edgeAddr, centralAddr, spool)
	edge := startCollector(t, "edge", filepath.Join(dir, "edge"), cfg, edgeAddr)

	acked := map[string]bool{}
	post := func(b int) {
		body, ids := crashBatch(b)
		postUntilAcked(t, edgeAddr, body)
		for _, id := range ids {
			acked[id] = true
		}
	}
	post(0)
	post(1)
	require.NoError(t, os.RemoveAll(spoolDir))
	post(2)
	post(3)
	waitLogHas(t, edge, "spool file was removed or renamed")
	requireMode(t, spool, 0o600)

	code, out := runCLI(t, "replay", spool, "--endpoint", "http://"+centralAddr+"/v1/sandbox/events", "--retry-for", "0s")
	require.NotZero(t, code, out)
	require.Contains(t, out, "in use", "a second owner is refused")

	edge.kill(t)
	edge = startCollector(t, "edge-again", filepath.Join(dir, "edge"), cfg, edgeAddr)
	central := startRecordingEndpoint(t, centralAddr)
	central.waitFor(t, acked, 30*time.Second)
	waitSpoolEmpty(t, spool)
	require.Equal(t, acked, central.ids(), "every acknowledged event, nothing else")
	central.close()
	edge.stop(t)
}

// postUntilAcked posts an ndjson batch to the edge's event intake until it
// answers 200 (a bounded number of times), as a client that resends does:
// an append is refused while a replay round reads a removed spool file.
func postUntilAcked(t *testing.T, addr string, body []byte) {
	t.Helper()
	for range 100 {
		resp, err := http.Post("http://"+addr+"/v1/sandbox/events", "application/x-ndjson", bytes.NewReader(body))
		require.NoError(t, err)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return
		}
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the edge did not acknowledge the batch after 100 tries")
}
