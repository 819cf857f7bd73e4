package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEdgeKeepsItsSpoolWhenCentralRefusesItsCompression: an edge that
// compresses with zstd sends to a central whose receiver takes only gzip,
// which answers 415 to every request. That refuses the edge's
// configuration, not its events: the edge spools them and logs the status,
// and once central takes zstd every event arrives, none dropped.
func TestEdgeKeepsItsSpoolWhenCentralRefusesItsCompression(t *testing.T) {
	requireE2E(t)
	n := newEdgeCentral(t)
	gzipOnly := strings.Replace(centralConfig(n.centralAddr, n.centralAudit),
		"    endpoint: "+n.centralAddr+"\n", "    endpoint: "+n.centralAddr+"\n    compression_algorithms: [gzip]\n", 1)
	require.Contains(t, gzipOnly, "compression_algorithms")
	zstdEdge := strings.Replace(edgeConfig(n.edgeOTLP, n.centralAddr, n.spoolPath),
		"      format: ndjson\n", "      format: ndjson\n      compression: zstd\n", 1)
	require.Contains(t, zstdEdge, "compression: zstd")

	central := startCollector(t, "central", n.centralDir, gzipOnly, n.centralAddr)
	edge := startCollector(t, "edge", n.edgeDir, zstdEdge, n.edgeOTLP)

	const session = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	runExample(t, n.edgeOTLP, session)
	waitLines(t, n.spoolPath, 12)
	require.Equal(t, 0, countLines(t, n.centralAudit), "central took none")

	// The operator lets central take zstd: the spool is replayed to it.
	central.stop(t)
	central = n.startCentral(t)
	waitLines(t, n.centralAudit, 12)
	deadline := time.Now().Add(deliveryTimeout)
	for pendingBytes(t, n.spoolPath) != 0 {
		require.True(t, time.Now().Before(deadline), "spool still holds %d unacknowledged bytes", pendingBytes(t, n.spoolPath))
		time.Sleep(pollInterval)
	}
	edge.stop(t)
	central.stop(t)

	evs, _ := readEvents(t, n.centralAudit)
	checkExampleSession(t, session, bySession(evs)[session])
	log := string(mustRead(t, edge.log))
	require.NotContains(t, log, "refused lines permanently", "nothing dropped")
	require.Contains(t, log, `"status": 415`, "an ERROR names the status")
}
