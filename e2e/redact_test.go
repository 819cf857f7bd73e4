package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// redactConfig runs OTLP spans through the sandboxaudit processor into the
// audit exporter and the debug exporter (a tracing backend's view), and
// the sandboxaudit receiver's events into the audit exporter (logs) and,
// as the spans it pairs them into, through the processor into the debug
// exporter. Exec output is included, the user rules are on.
func redactConfig(otlpAddr, sandboxAddr, auditPath string) string {
	policy := fmt.Sprintf(`payload_policy:
      include_exec_output: true
      redact:
        patterns: ['%s']
        keys: [%s]`, redacttest.UserPattern, redacttest.UserKey)
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
  sandboxaudit:
    endpoint: %s
processors:
  sandboxaudit:
    %s
exporters:
  sandboxaudit:
    %s
    file:
      path: %s
  debug:
    verbosity: detailed
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces/otlp:
      receivers: [otlp]
      processors: [sandboxaudit]
      exporters: [sandboxaudit, debug]
    traces/events:
      receivers: [sandboxaudit]
      processors: [sandboxaudit]
      exporters: [debug]
    logs:
      receivers: [sandboxaudit]
      exporters: [sandboxaudit]
`, otlpAddr, sandboxAddr, policy, policy, auditPath)
}

const (
	redactProxySession = "5e1c2a8e-0000-4000-8000-00000000a001"
	redactSpanSession  = "5e1c2a8e-0000-4000-8000-00000000a002"
)

// secretProxyEvents are a start and a finish as the Python HttpProxySink
// posts them, with a secret of every kind in argv, env, the error message
// and the included stdout.
func secretProxyEvents(t *testing.T) []string {
	t.Helper()
	data := map[string]any{"command": redacttest.Argv(), "env": redacttest.Env()}
	common := func(phase string, seq int, ts string) map[string]any {
		return map[string]any{
			"version": 1, "event_id": fmt.Sprintf("5e1c2a8e-0000-4000-8000-0000000b000%d", seq), "ts": ts,
			"session_id": redactProxySession, "seq": seq, "op": "exec", "phase": phase,
			"span_id": "sandbox_op_5e1c2a8e00004000800000000000b001", "parent_span_id": nil, "trace_id": nil, "data": data,
		}
	}
	start := common("start", 1, "2026-03-14T15:09:26.535897Z")
	finish := common("finish", 2, "2026-03-14T15:09:27.535897Z")
	for k, v := range map[string]any{
		"ok": false, "duration_ms": 1000.0, "error_code": "exec_nonzero", "error_type": "ExecNonZeroError",
		"error_message": redacttest.Text(), "error_retryable": false, "stdout": redacttest.Text(), "stderr": nil,
	} {
		finish[k] = v
	}
	var out []string
	for _, ev := range []map[string]any{start, finish} {
		b, err := json.Marshal(ev)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}

// secretSpans is one exec span as sandboxtrace records it, with the same
// secrets in its data, error message, status message and raw stdout.
func secretSpans(t *testing.T) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	sp := failedExecSpan(td, 0x1c, redacttest.Text())
	sp.SetKind(ptrace.SpanKindInternal)
	data, err := json.Marshal(map[string]any{"command": redacttest.Argv(), "env": redacttest.Env()})
	require.NoError(t, err)
	a := sp.Attributes()
	a.PutStr("sandbox.operation", "exec")
	a.PutStr("sandbox.session.id", redactSpanSession)
	a.PutInt("sandbox.event.start_seq", 1)
	a.PutInt("sandbox.event.finish_seq", 2)
	a.PutStr("sandbox.start_data", string(data))
	a.PutBool("sandbox.ok", false)
	a.PutStr("sandbox.error.message", redacttest.Text())
	a.PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw([]byte(redacttest.Text()))
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	return body
}

// failedExecSpan appends to td a one-second sandbox.exec span that failed
// with msg, its trace and span IDs starting 0x5e, id.
func failedExecSpan(td ptrace.Traces, id byte, msg string) ptrace.Span {
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("sandbox.exec")
	sp.SetTraceID(pcommon.TraceID{0x5e, id, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14})
	sp.SetSpanID(pcommon.SpanID{0x5e, id, 1, 2, 3, 4, 5, 6})
	start := time.Date(2026, 3, 14, 15, 9, 30, 0, time.UTC)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
	sp.Status().SetCode(ptrace.StatusCodeError)
	sp.Status().SetMessage(msg)
	return sp
}

// TestSecretsNeverReachTheTrail: events in the Python sink's wire format
// and spans over OTLP, each carrying a secret of every kind, leave no
// secret in the audit file, in the debug exporter's output or in the
// collector's logs; the markers are there and verify passes.
func TestSecretsNeverReachTheTrail(t *testing.T) {
	requireE2E(t)
	col := startRedactCollector(t)
	auditPath := col.auditPath

	for _, ev := range secretProxyEvents(t) {
		postEvent(t, "http://"+col.sandboxAddr+"/v1/sandbox/events", ev)
	}
	postOTLP(t, col.otlpAddr, secretSpans(t))
	waitLines(t, auditPath, 4)
	// The debug exporter prints both spans (the OTLP one, and the one the
	// receiver paired the events into) once they are processed.
	waitLogCount(t, col.log, "sandbox.error.message", 2)
	col.stop(t)

	audit, logText := col.holdsNone(t, redacttest.Secrets())
	for _, kind := range redact.KindNames() {
		assert.Contains(t, audit, "[REDACTED:"+kind+"]", "audit file")
		assert.Contains(t, logText, "[REDACTED:"+kind+"]", "debug exporter output")
	}
	assert.Contains(t, audit, `"/var/run/secrets/token"`, "--token-file's path stays")
	evs, _ := readEvents(t, auditPath)
	require.Len(t, evs, 4)
	out := requireVerifies(t, auditPath)
	assert.Contains(t, out, "lines=4 events=4 sessions=2")
}

// redactCollector is a collector running redactConfig.
type redactCollector struct {
	*collector
	otlpAddr, sandboxAddr, auditPath string
}

// startRedactCollector starts a collector on redactConfig in a new
// directory.
func startRedactCollector(t *testing.T) redactCollector {
	t.Helper()
	dir := t.TempDir()
	addrs := freeAddrs(t, 2)
	c := redactCollector{otlpAddr: addrs[0], sandboxAddr: addrs[1], auditPath: filepath.Join(dir, "audit", "events.jsonl")}
	c.collector = startCollector(t, "collector", dir, redactConfig(c.otlpAddr, c.sandboxAddr, c.auditPath), addrs...)
	return c
}

// holdsNone asserts that neither the audit file nor the collector's log
// (with the debug exporter's output) holds any of secrets, and returns
// their text.
func (c redactCollector) holdsNone(t *testing.T, secrets []string) (audit, logText string) {
	t.Helper()
	audit = string(mustRead(t, c.auditPath))
	logText = string(mustRead(t, c.log))
	for _, secret := range secrets {
		assert.NotContains(t, audit, secret, "audit file")
		assert.NotContains(t, logText, secret, "collector log and debug exporter output")
	}
	return audit, logText
}

// postOTLP posts an OTLP/HTTP protobuf traces request.
func postOTLP(t *testing.T, addr string, body []byte) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post("http://"+addr+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Less(t, resp.StatusCode, 300, "POST /v1/traces: status %d", resp.StatusCode)
}

// waitLogCount waits until the file at path holds s at least n times.
func waitLogCount(t *testing.T, path, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(deliveryTimeout)
	for {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		if strings.Count(string(b), s) >= n {
			return
		}
		require.True(t, time.Now().Before(deadline), "%s: %q seen %d of %d times after %s", path, s, strings.Count(string(b), s), n, deliveryTimeout)
		time.Sleep(pollInterval)
	}
}
