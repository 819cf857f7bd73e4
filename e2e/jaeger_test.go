package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// jaegerEnv names the Jaeger v2 binary (make e2e-jaeger builds it from
// tools/jaeger and sets it).
const jaegerEnv = "SANDBOXAUDIT_JAEGER"

// jaegerYAML runs Jaeger v2 on loopback only: OTLP/HTTP in, memory
// storage, the query API, no metrics port.
func jaegerYAML(otlpAddr, queryAddr, queryGRPCAddr string) string {
	return fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: %s
    grpc:
      endpoint: %s
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`, queryAddr, queryGRPCAddr, otlpAddr)
}

// forwardingYAML is one collector that takes the example's spans and
// write-ahead starts, writes the audit lines to a file, and sends the spans,
// through the sandboxaudit processor, to Jaeger over OTLP/HTTP.
func forwardingYAML(otlpAddr, jaegerOTLP, auditPath string) string {
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
processors:
  sandboxaudit:
exporters:
  sandboxaudit:
    file:
      path: %s
  otlp_http/jaeger:
    endpoint: http://%s
    compression: none
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [sandboxaudit]
      exporters: [sandboxaudit, otlp_http/jaeger]
    logs:
      receivers: [otlp]
      exporters: [sandboxaudit]
`, otlpAddr, auditPath, jaegerOTLP)
}

// jaegerSpan is a span as Jaeger's query API returns it.
type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	Tags          []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
}

func (s jaegerSpan) tag(key string) string {
	for _, t := range s.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// fetchTrace asks Jaeger's query API for a trace until it holds want spans.
func fetchTrace(t *testing.T, queryAddr, traceID string, want int) []jaegerSpan {
	t.Helper()
	deadline := time.Now().Add(deliveryTimeout)
	for {
		spans, status := getTrace(t, queryAddr, traceID)
		if len(spans) >= want {
			return spans
		}
		require.True(t, time.Now().Before(deadline), "trace %s: %d of %d spans in Jaeger after %s (last status %d)",
			traceID, len(spans), want, deliveryTimeout, status)
		time.Sleep(200 * time.Millisecond)
	}
}

func getTrace(t *testing.T, queryAddr, traceID string) ([]jaegerSpan, int) {
	t.Helper()
	resp, err := http.Get("http://" + queryAddr + "/api/traces/" + traceID)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode
	}
	var out struct {
		Data []struct {
			Spans []jaegerSpan `json:"spans"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &out), "Jaeger's answer: %.300s", body)
	var spans []jaegerSpan
	for _, tr := range out.Data {
		spans = append(spans, tr.Spans...)
	}
	return spans, resp.StatusCode
}

// TestJaegerCorrelation shows span-to-audit correlation against a real
// tracing backend, both ways: from an audit line to its span in Jaeger, and
// from a span in Jaeger to its two audit lines with `sandboxaudit show`.
func TestJaegerCorrelation(t *testing.T) {
	requireE2E(t)
	jaeger := os.Getenv(jaegerEnv)
	if jaeger == "" {
		t.Skipf("%s not set: this test runs with make e2e-jaeger, which builds Jaeger v2 from tools/jaeger", jaegerEnv)
	}
	addrs := freeAddrs(t, 4)
	jaegerOTLP, queryAddr, queryGRPC, otlpAddr := addrs[0], addrs[1], addrs[2], addrs[3]
	dir := t.TempDir()
	startCollectorBinary(t, jaeger, "jaeger", filepath.Join(dir, "jaeger"), jaegerYAML(jaegerOTLP, queryAddr, queryGRPC), jaegerOTLP, queryAddr)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", filepath.Join(dir, "collector"), forwardingYAML(otlpAddr, jaegerOTLP, auditPath), otlpAddr)

	const session = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	runExample(t, otlpAddr, session, "-exit-code", "3")
	col.stop(t) // flushes the exporters: every line written, every span sent
	evs, lines := readEvents(t, auditPath)
	require.NotEmpty(t, evs)

	// Audit line → span: each finish line's trace_id finds its trace in
	// Jaeger, its span_id the span, whose event ids are the two lines'.
	byID := map[string]int{}
	for i, ev := range evs {
		byID[ev.EventID.String()] = i
	}
	ops := 0
	for _, fin := range evs {
		if fin.Phase != auditevent.PhaseFinish {
			continue
		}
		ops++
		require.NotNil(t, fin.TraceID, "finish seq %d has no trace_id", fin.Seq)
		spans := fetchTrace(t, queryAddr, *fin.TraceID, 1)
		var span *jaegerSpan
		for i := range spans {
			if spans[i].SpanID == fin.SpanID {
				span = &spans[i]
			}
		}
		require.NotNil(t, span, "span %s not in trace %s in Jaeger", fin.SpanID, *fin.TraceID)
		require.Equal(t, "sandbox."+fin.Op, span.OperationName)
		require.Equal(t, fin.EventID.String(), span.tag("sandbox.event.finish_id"), "span %s", span.SpanID)
		startIdx, ok := byID[span.tag("sandbox.event.start_id")]
		require.True(t, ok, "span %s: sandbox.event.start_id %q is no line's event_id", span.SpanID, span.tag("sandbox.event.start_id"))
		start := evs[startIdx]
		require.Equal(t, auditevent.PhaseStart, start.Phase)
		require.Equal(t, fin.SpanID, start.SpanID)
		require.Equal(t, session, span.tag("sandbox.session.id"))
		require.Empty(t, span.tag("sandbox.exec.stdout_bytes"), "the processor removed raw exec output")

		// Span → audit lines: show --span returns exactly the two lines,
		// byte for byte as the file holds them.
		code, out := runCLI(t, "show", "--span", span.SpanID, "--output", "jsonl", auditPath)
		require.Equal(t, 0, code, out)
		require.Equal(t, lines[startIdx]+"\n"+lines[byID[fin.EventID.String()]]+"\n", out, "show --span %s", span.SpanID)

		code, out = runCLI(t, "show", "--trace", span.TraceID, "--span", span.SpanID, auditPath)
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "1 operation:")
	}
	require.Positive(t, ops)
	t.Logf("%d operations correlated both ways with Jaeger %s", ops, jaeger)

	// The whole trail reads back through show unchanged, in seq order per
	// session, and a failed exec is found by --failed.
	code, out := runCLI(t, "show", "--output", "jsonl", auditPath)
	require.Equal(t, 0, code, out)
	got := strings.Split(out, "\n")
	require.ElementsMatch(t, lines, got[:len(got)-1])
	code, out = runCLI(t, "show", "--failed", auditPath)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "FAIL")
}
