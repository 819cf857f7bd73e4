package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestWitnessHeldDoesNotHoldANewSession: with a templated path, a round's
// request to the witness hangs; a new session's event, posted with a
// client timeout as the Python HttpProxySink posts it, is written and
// answered while that request is still held.
func TestWitnessHeldDoesNotHoldANewSession(t *testing.T) {
	requireE2E(t)
	lw := startLitewitness(t, "e2e.example/witness")
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	proxy, proxyURL := startHoldingProxy(t, "http://"+lw.addr)
	proxy.setHold(true)
	sandboxAddr := freeAddr(t)
	base := filepath.Join(dir, "audit")
	cfg := collectorYAML{
		sandboxAddr: sandboxAddr, // no batch processor: a 200 means written
		exporter: fmt.Sprintf("file:\n  path: %s\n  integrity:\n    signing_key_file: %s\n    checkpoint_interval: 200ms\n"+
			"    witnesses:\n      - endpoint: %s\n        public_key: %s\n        timeout: 12s\n", // the round's bound
			filepath.Join(base, "{session_id}", "events.jsonl"), keyPath, proxyURL, lw.vkey),
	}.String()
	col := startCollector(t, "collector", dir, cfg, sandboxAddr)

	first := uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")
	postLines(t, sandboxAddr, pairLines(first, 1))
	select {
	case <-proxy.held:
	case <-time.After(deliveryTimeout):
		t.Fatal("no round submitted the first session's checkpoint")
	}

	next := uuid.MustParse("22222222-3333-4444-8555-666666666666")
	client := &http.Client{Timeout: 10 * time.Second}
	for _, l := range pairLines(next, 1) {
		resp, err := client.Post("http://"+sandboxAddr+"/v1/sandbox/events", "application/json", strings.NewReader(strings.TrimSuffix(l, "\n")))
		require.NoError(t, err, "the new session's event waited for the witness request")
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	require.Equal(t, int32(1), proxy.holding.Load(), "answered while the witness request was held")
	nextPath := filepath.Join(base, next.String(), "events.jsonl")
	require.Equal(t, 2, countLines(t, nextPath))
	require.Equal(t, []int64{0}, checkpointSizes(t, nextPath, pubPath), "its checkpoint of 0 lines came first")
	proxy.setHold(false) // the shutdown round's requests reach the witness
	col.stop(t)
}
