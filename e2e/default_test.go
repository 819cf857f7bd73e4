package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultConfigRuns runs the embedded default configuration (what
// `make run` starts) with only its four loopback ports moved to free ones:
// the audit trail lands in ./audit/events.jsonl of the working directory,
// 0600 in a 0700 directory, exec output redacted although the example
// captured it, and self-metrics are served on loopback. Once it runs, it
// says so on one plain line: the audit file's absolute path, each intake
// address and the self-metrics URL.
func TestDefaultConfigRuns(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addrs := freeAddrs(t, 4)
	grpcAddr, httpAddr, sandboxAddr, metricsAddr := addrs[0], addrs[1], addrs[2], addrs[3]
	cfg := defaultConfigOn(t, grpcAddr, httpAddr, sandboxAddr, metricsAddr)
	col := startCollector(t, "default", dir, cfg, grpcAddr, httpAddr, sandboxAddr, metricsAddr)

	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	assert.Equal(t, []string{"sandboxaudit: audit lines to " + auditPath +
		"; intake OTLP/gRPC " + grpcAddr + ", OTLP/HTTP http://" + httpAddr + ", events http://" + sandboxAddr + "/v1/sandbox/events" +
		"; self-metrics http://" + metricsAddr + "/metrics"}, startupLines(t, col))
	const session = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	runExample(t, httpAddr, session, "-capture-output")
	// No batch processor in the default: the example's export returns only
	// once the lines are in the file, so there is nothing to wait for.
	require.Equal(t, 12, countLines(t, auditPath), "lines written when the example's export returned")
	requireMode(t, auditPath, 0o600)
	requireMode(t, filepath.Dir(auditPath), 0o700)

	postProxyEvents(t, sandboxAddr)
	require.Equal(t, 14, countLines(t, auditPath))
	evs, lines := readEvents(t, auditPath)
	checkExampleSession(t, session, bySession(evs)[session])
	assert.Equal(t, proxyEvents, lines[12:])

	metrics := httpGet(t, "http://"+metricsAddr+"/metrics")
	assert.Contains(t, metrics, `otelcol_sandboxaudit_exporter_events_written{sink="file"} 14`)

	col.stop(t)
	out := requireVerifies(t, auditPath)
	assert.Contains(t, out, "files=1 lines=14 events=14 sessions=2 open=0 problems=0")
}

// TestShutdownWritesHeldBatch shows that nothing acknowledged is lost at
// shutdown: a batch processor that would hold the spans for an hour has
// acknowledged them to the example, the file is still empty, and SIGTERM
// must still get every event into the file before the collector exits 0.
func TestShutdownWritesHeldBatch(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	otlpAddr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", dir, collectorYAML{
		otlpAddr: otlpAddr,
		batch:    "timeout: 1h\nsend_batch_size: 100000",
		exporter: "file:\n  path: " + auditPath,
	}.String(), otlpAddr)

	const session = "22222222-3333-4444-8555-666666666666"
	runExample(t, otlpAddr, session)
	require.Equal(t, 0, countLines(t, auditPath), "the batch processor should still hold the spans")

	col.stop(t)
	require.Equal(t, 12, countLines(t, auditPath), "events acknowledged before SIGTERM were lost")
	evs, _ := readEvents(t, auditPath)
	checkExampleSession(t, session, evs)
	requireVerifies(t, auditPath)
}

// startupLines returns the lines of the collector's output that begin
// with "sandboxaudit: ". The line follows the ready log entry, which the
// caller has seen, so it waits for one to appear.
func startupLines(t *testing.T, c *collector) []string {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		b, err := os.ReadFile(c.log)
		require.NoError(t, err)
		var lines []string
		for line := range strings.Lines(string(b)) {
			if strings.HasPrefix(line, "sandboxaudit: ") {
				lines = append(lines, strings.TrimSuffix(line, "\n"))
			}
		}
		if len(lines) > 0 || time.Now().After(deadline) {
			return lines
		}
		time.Sleep(pollInterval)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s", url)
	return string(b)
}

// TestREADMEPortFlagsRun runs the command the README gives for a machine
// whose default ports are taken, as written but for the three ports, which
// it moves to free ones: the default configuration starts on them with
// its self-metrics off, so a taken 8888 does not stop it either.
func TestREADMEPortFlagsRun(t *testing.T) {
	requireE2E(t)
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	const prefix = "bin/otelcol-sandboxaudit --set "
	start := strings.Index(string(readme), prefix)
	require.GreaterOrEqual(t, start, 0, "README.md gives the --set command for taken ports")
	end := strings.Index(string(readme[start:]), "\n```")
	require.Positive(t, end)
	args := strings.Fields(strings.ReplaceAll(string(readme[start:start+end]), "\\\n", " "))[1:]

	addrs := freeAddrs(t, 3)
	grpcAddr, httpAddr, sandboxAddr := addrs[0], addrs[1], addrs[2]
	for i, a := range args {
		args[i] = strings.NewReplacer("127.0.0.1:18088", sandboxAddr, "127.0.0.1:14317", grpcAddr,
			"127.0.0.1:14318", httpAddr).Replace(a)
	}
	require.Contains(t, args, "receivers::sandboxaudit::endpoint="+sandboxAddr, "the README moves the event intake: %q", args)
	require.Contains(t, args, "receivers::otlp::protocols::grpc::endpoint="+grpcAddr, "%q", args)
	require.Contains(t, args, "receivers::otlp::protocols::http::endpoint="+httpAddr, "%q", args)

	dir := t.TempDir()
	col := startCollectorArgs(t, bins.collector, "readme-ports", dir, args, grpcAddr, httpAddr, sandboxAddr)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	assert.Equal(t, []string{"sandboxaudit: audit lines to " + auditPath +
		"; intake OTLP/gRPC " + grpcAddr + ", OTLP/HTTP http://" + httpAddr + ", events http://" + sandboxAddr + "/v1/sandbox/events" +
		"; self-metrics off"}, startupLines(t, col))
	postProxyEvents(t, sandboxAddr)
	require.Equal(t, len(proxyEvents), countLines(t, auditPath))
	col.stop(t)
}
