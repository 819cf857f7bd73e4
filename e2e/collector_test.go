package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// exampleOps are the operations the example records, in order; each takes
// two seqs (start, finish) since they run one after another.
var exampleOps = []string{"start", "exec", "write", "read", "exec", "stop"}

var (
	hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)
	hex16 = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

// checkExampleSession requires evs to be exactly the events of one run of
// the example: 12 events, seqs 1..12, the right ops and outcomes, OTel ids,
// and exec output redacted by the default policy although the example
// captured it on the spans.
func checkExampleSession(t *testing.T, session string, evs []auditevent.Event) {
	t.Helper()
	require.Len(t, evs, 2*len(exampleOps), "events of session %s", session)
	sort.Slice(evs, func(i, j int) bool { return evs[i].Seq < evs[j].Seq })
	trace := evs[0].TraceID
	require.NotNil(t, trace)
	assert.Regexp(t, hex32, *trace)
	ids := map[string]bool{}
	for i, e := range evs {
		what := fmt.Sprintf("session %s seq %d", session, e.Seq)
		opIdx := i / 2
		assert.Equal(t, int64(i+1), e.Seq, what)
		assert.Equal(t, session, e.SessionID.String(), what)
		assert.Equal(t, exampleOps[opIdx], e.Op, what)
		assert.Equal(t, int64(1), e.Version, what)
		assert.False(t, ids[e.EventID.String()], "%s: duplicate event_id", what)
		ids[e.EventID.String()] = true
		// One session is one trace; each operation is one span.
		if assert.NotNil(t, e.TraceID, what) {
			assert.Equal(t, *trace, *e.TraceID, what)
		}
		assert.Regexp(t, hex16, e.SpanID, what)
		if i%2 == 0 {
			assert.Equal(t, auditevent.PhaseStart, e.Phase, what)
			continue
		}
		start := evs[i-1]
		assert.Equal(t, auditevent.PhaseFinish, e.Phase, what)
		assert.Equal(t, start.SpanID, e.SpanID, what)
		assert.False(t, e.TS.Time().Before(start.TS.Time()), "%s: finish before start", what)
		assert.GreaterOrEqual(t, e.DurationMS, 0.0, what)
		assert.Nil(t, e.Stdout, "%s: stdout must be redacted", what)
		assert.Nil(t, e.Stderr, "%s: stderr must be redacted", what)
		if opIdx == 4 { // the failing exec: exit status 2, ok=false, no error fields
			assert.False(t, e.OK, what)
			assert.Nil(t, e.ErrorCode, what)
			assert.Nil(t, e.ErrorType, what)
			assert.Nil(t, e.ErrorMessage, what)
			assert.Nil(t, e.ErrorRetryable, what)
			exit, ok := e.Data.Lookup("exit_code")
			assert.True(t, ok, what)
			assert.Equal(t, "2", string(exit), what)
		} else {
			assert.True(t, e.OK, what)
			assert.Nil(t, e.ErrorCode, what)
			assert.Nil(t, e.ErrorType, what)
			assert.Nil(t, e.ErrorMessage, what)
		}
		if exampleOps[opIdx] == "write" {
			n, ok := e.Data.Lookup("bytes")
			assert.True(t, ok, "%s: write length kept by the default policy", what)
			assert.Equal(t, "12", string(n), what)
		}
	}
}

// collectorConfig is a single collector writing the audit file, with the
// OTLP/HTTP receiver for spans and the sandboxaudit receiver for events.
func collectorConfig(otlpAddr, sandboxAddr, auditPath string) string {
	return collectorYAML{
		otlpAddr:      otlpAddr,
		sandboxAddr:   sandboxAddr,
		memoryLimiter: true,
		batch:         "timeout: 500ms",
		exporter:      "file:\n  path: " + auditPath,
	}.String()
}

// proxyEvents are a start and finish as the Python HttpProxySink posts them
// (its own span ids, no trace), written here in canonical form so the audit
// line can be compared byte for byte.
const proxySession = "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e"

var proxyEvents = []string{
	`{"data":{"path":"/workspace/a.txt"},"event_id":"7d4c1b2a-0000-4000-8000-000000000001","op":"read","parent_span_id":null,"phase":"start","seq":1,"session_id":"` + proxySession + `","span_id":"sandbox_op_0af7651916cd43dd8448eb211c80319c","trace_id":null,"ts":"2026-03-14T15:09:26.535897Z","version":1}`,
	`{"data":{"path":"/workspace/a.txt"},"duration_ms":2.5,"error_code":null,"error_message":null,"error_retryable":null,"error_type":null,"event_id":"7d4c1b2a-0000-4000-8000-000000000002","ok":true,"op":"read","parent_span_id":null,"phase":"finish","seq":2,"session_id":"` + proxySession + `","span_id":"sandbox_op_0af7651916cd43dd8448eb211c80319c","stderr":null,"stdout":null,"trace_id":null,"ts":"2026-03-14T15:09:26.538397Z","version":1}`,
}

// postProxyEvents posts proxyEvents to a sandboxaudit receiver, one per
// request.
func postProxyEvents(t *testing.T, sandboxAddr string) {
	t.Helper()
	for _, ev := range proxyEvents {
		postEvent(t, "http://"+sandboxAddr+"/v1/sandbox/events", ev)
	}
}

func postEvent(t *testing.T, url, body string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Less(t, resp.StatusCode, 300, "POST %s: status %d", url, resp.StatusCode)
}

func TestCollectorWritesAuditTrail(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addrs := freeAddrs(t, 2)
	otlpAddr, sandboxAddr := addrs[0], addrs[1]
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", dir, collectorConfig(otlpAddr, sandboxAddr, auditPath), otlpAddr, sandboxAddr)

	// Spans from the instrumented example, exec output captured on the spans.
	const session1 = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	runExample(t, otlpAddr, session1, "-capture-output")
	waitLines(t, auditPath, 12)
	requireMode(t, auditPath, 0o600)
	evs, _ := readEvents(t, auditPath)
	checkExampleSession(t, session1, bySession(evs)[session1])

	// Events as the Python HttpProxySink posts them, one per request.
	postProxyEvents(t, sandboxAddr)
	waitLines(t, auditPath, 14)
	_, lines := readEvents(t, auditPath)
	assert.Equal(t, proxyEvents, lines[12:], "proxy events must be written as they were sent")

	out := requireVerifies(t, auditPath)
	assert.Contains(t, out, "files=1 lines=14 events=14 sessions=2 open=0 problems=0")

	// A burst right before SIGTERM: the example returns once the collector
	// acknowledged the spans, and the shutdown must still write what the
	// batch processor holds before exiting 0 (TestShutdownWritesHeldBatch
	// makes that deterministic).
	const session2 = "22222222-3333-4444-8555-666666666666"
	runExample(t, otlpAddr, session2)
	col.stop(t)
	require.Equal(t, 26, countLines(t, auditPath), "events acknowledged before SIGTERM were lost")
	evs, _ = readEvents(t, auditPath)
	sessions := bySession(evs)
	assert.Len(t, sessions, 3)
	checkExampleSession(t, session1, sessions[session1])
	checkExampleSession(t, session2, sessions[session2])
	requireVerifies(t, auditPath)
}

// TestEdgeSpoolsWhileCentralIsDown: the edge → central pair of
// testdata/edge.yaml and central.yaml, with the central collector stopped
// for a while and then started again. Everything arrives exactly once, and
// the edge's spool is empty at the end.
func TestEdgeSpoolsWhileCentralIsDown(t *testing.T) {
	requireE2E(t)
	n := newEdgeCentral(t)
	edgeOTLP, spoolPath, centralAudit := n.edgeOTLP, n.spoolPath, n.centralAudit

	central := n.startCentral(t)
	edge := n.startEdge(t)

	// Both up: the lines go straight through, nothing is spooled.
	const session0 = "0f0e0d0c-0b0a-4908-8706-050403020100"
	runExample(t, edgeOTLP, session0)
	waitLines(t, centralAudit, 12)
	assert.Equal(t, int64(0), pendingBytes(t, spoolPath))

	// Central stops: the edge still accepts the spans and spools the lines.
	central.stop(t)
	const session1 = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	runExample(t, edgeOTLP, session1, "-capture-output")
	waitLines(t, spoolPath, 12)
	requireMode(t, spoolPath, 0o600)
	spooled, _ := readEvents(t, spoolPath)
	checkExampleSession(t, session1, spooled) // policy applied before spooling

	// Central starts again on the same address: the spool is replayed to it
	// and trimmed.
	central = n.startCentral(t)
	waitLines(t, centralAudit, 24)
	deadline := time.Now().Add(deliveryTimeout)
	for pendingBytes(t, spoolPath) != 0 {
		require.True(t, time.Now().Before(deadline), "spool still holds %d unacknowledged bytes", pendingBytes(t, spoolPath))
		time.Sleep(pollInterval)
	}

	// With central back, new spans go straight through again.
	const session2 = "22222222-3333-4444-8555-666666666666"
	runExample(t, edgeOTLP, session2)
	waitLines(t, centralAudit, 36)

	edge.stop(t)
	central.stop(t)

	require.Equal(t, 36, countLines(t, centralAudit))
	evs, lines := readEvents(t, centralAudit)
	seen := map[string]bool{}
	for _, e := range evs {
		assert.False(t, seen[e.EventID.String()], "duplicate event_id %s in central file", e.EventID)
		seen[e.EventID.String()] = true
	}
	sessions := bySession(evs)
	assert.Len(t, sessions, 3)
	checkExampleSession(t, session0, sessions[session0])
	checkExampleSession(t, session1, sessions[session1])
	checkExampleSession(t, session2, sessions[session2])
	// Central writes exactly what the edge spooled.
	var spooledLines []string
	for _, e := range spooled {
		spooledLines = append(spooledLines, strings.TrimSuffix(string(auditevent.Line(&e)), "\n"))
	}
	var central1 []string
	for _, l := range lines {
		if strings.Contains(l, session1) {
			central1 = append(central1, l)
		}
	}
	sort.Strings(spooledLines)
	sort.Strings(central1)
	assert.Equal(t, spooledLines, central1)

	requireVerifies(t, centralAudit)
	assert.Equal(t, int64(0), pendingBytes(t, spoolPath), "spool not empty at the end")
}

// edgeCentral is the edge → central pair, each collector in its own
// directory under one temporary root.
type edgeCentral struct {
	edgeDir, centralDir   string
	edgeOTLP, centralAddr string
	spoolPath             string // the edge's spool
	centralAudit          string // the central audit file
}

func newEdgeCentral(t *testing.T) edgeCentral {
	t.Helper()
	root := t.TempDir()
	addrs := freeAddrs(t, 2)
	n := edgeCentral{
		edgeDir:     filepath.Join(root, "edge"),
		centralDir:  filepath.Join(root, "central"),
		edgeOTLP:    addrs[0],
		centralAddr: addrs[1],
	}
	n.spoolPath = filepath.Join(n.edgeDir, "spool", "audit-spool.jsonl")
	n.centralAudit = filepath.Join(n.centralDir, "audit", "events.jsonl")
	return n
}

func (n edgeCentral) startEdge(t *testing.T) *collector {
	t.Helper()
	return startCollector(t, "edge", n.edgeDir, edgeConfig(n.edgeOTLP, n.centralAddr, n.spoolPath), n.edgeOTLP)
}

// startCentral starts central, again on the same address when it ran before.
func (n edgeCentral) startCentral(t *testing.T) *collector {
	t.Helper()
	return startCollector(t, "central", n.centralDir, centralConfig(n.centralAddr, n.centralAudit), n.centralAddr)
}

// edgeConfig forwards spans as audit lines to central, spooling what
// central does not take; short retry and replay intervals keep the test
// quick.
func edgeConfig(otlpAddr, centralAddr, spoolPath string) string {
	return collectorYAML{
		otlpAddr: otlpAddr,
		batch:    "timeout: 200ms",
		exporter: fmt.Sprintf(`
retry_on_failure:
  enabled: true
  initial_interval: 100ms
  max_interval: 500ms
  max_elapsed_time: 1s
http:
  endpoint: http://%s/v1/sandbox/events
  format: ndjson
  timeout: 2s
  spool:
    path: %s
    replay_interval: 300ms`, centralAddr, spoolPath),
	}.String()
}

// centralConfig writes what it receives; exec output the edge kept passes
// through, what it redacted is already null.
func centralConfig(addr, auditPath string) string {
	return collectorYAML{
		sandboxAddr: addr,
		batch:       "timeout: 200ms",
		exporter:    "payload_policy:\n  include_exec_output: true\nfile:\n  path: " + auditPath,
	}.String()
}

// TestReplayLeftoverSpoolByHand: the edge stops while central is down (it
// must still exit cleanly, keeping the spool); later an operator sends the
// spool with `sandboxaudit replay`.
func TestReplayLeftoverSpoolByHand(t *testing.T) {
	requireE2E(t)
	n := newEdgeCentral(t)
	edgeOTLP, spoolPath, centralAudit := n.edgeOTLP, n.spoolPath, n.centralAudit

	edge := n.startEdge(t)
	const session = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	runExample(t, edgeOTLP, session)
	waitLines(t, spoolPath, 12)
	edge.stop(t)
	require.Equal(t, int64(len(mustRead(t, spoolPath))), pendingBytes(t, spoolPath), "the stopped edge's spool must keep every line")

	central := n.startCentral(t)
	code, out := runCLI(t, "replay", spoolPath, "--endpoint", "http://"+n.centralAddr+"/v1/sandbox/events",
		"--header", "Authorization=Bearer e2e-secret-token")
	require.Equal(t, 0, code, "replay:\n%s", indent(out))
	assert.Contains(t, out, "sent 12 lines")
	assert.NotContains(t, out, "e2e-secret-token")
	assert.Equal(t, int64(0), pendingBytes(t, spoolPath))

	waitLines(t, centralAudit, 12)
	central.stop(t)
	evs, _ := readEvents(t, centralAudit)
	checkExampleSession(t, session, evs)
	requireVerifies(t, centralAudit)
}
