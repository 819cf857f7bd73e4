package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSyncFinishWritesEachEventOnce: with -delivery sync_finish every start
// and finish reaches the collector twice (a log record ahead, then the
// span), and the audit file holds each once.
func TestSyncFinishWritesEachEventOnce(t *testing.T) {
	requireE2E(t)
	checkSyncFinishOnce(t, "8f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")
}

// TestSyncFinishDirectLogsWritesEachEventOnce: the same with the records
// sent by sandboxtrace.DirectLogExporter through the collector's OTLP
// receiver.
func TestSyncFinishDirectLogsWritesEachEventOnce(t *testing.T) {
	requireE2E(t)
	checkSyncFinishOnce(t, "7f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b", "-direct-logs")
}

// checkSyncFinishOnce runs the example with -delivery sync_finish and args
// against a collector writing an audit file, and checks session's events
// there.
func checkSyncFinishOnce(t *testing.T, session string, args ...string) {
	dir := t.TempDir()
	otlpAddr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", dir, collectorYAML{
		otlpAddr: otlpAddr,
		exporter: "file:\n  path: " + auditPath + "\n  fsync: batch",
	}.String(), otlpAddr)
	runExample(t, otlpAddr, session, append([]string{"-delivery", "sync_finish"}, args...)...)
	col.stop(t)
	evs, _ := readEvents(t, auditPath)
	checkExampleSession(t, session, bySession(evs)[session])
}

// TestSyncFinishLinesAreTheSpansLines: the finish a session sends ahead is
// byte for byte the line the collector maps from its span, so whichever
// copy arrives first, the trail reads the same. Both log exporters.
func TestSyncFinishLinesAreTheSpansLines(t *testing.T) {
	requireE2E(t)
	for name, args := range map[string][]string{"otlploghttp": nil, "direct": {"-direct-logs"}} {
		t.Run(name, func(t *testing.T) { checkSyncFinishLines(t, args) })
	}
}

func checkSyncFinishLines(t *testing.T, args []string) {
	dir := t.TempDir()
	otlpAddr := freeAddr(t)
	logsPath := filepath.Join(dir, "logs.jsonl")
	spansPath := filepath.Join(dir, "spans.jsonl")
	col := startCollector(t, "collector", dir, `
receivers:
  otlp:
    protocols:
      http:
        endpoint: `+otlpAddr+`
exporters:
  sandboxaudit/logs:
    file:
      path: `+logsPath+`
  sandboxaudit/spans:
    file:
      path: `+spansPath+`
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [sandboxaudit/logs]
    traces:
      receivers: [otlp]
      exporters: [sandboxaudit/spans]
`, otlpAddr)
	runExample(t, otlpAddr, "9f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b", append([]string{"-delivery", "sync_finish"}, args...)...)
	col.stop(t)

	fromSpans := map[string]bool{}
	for _, l := range strings.SplitAfter(string(mustRead(t, spansPath)), "\n") {
		fromSpans[l] = true
	}
	logLines := strings.SplitAfter(string(mustRead(t, logsPath)), "\n")
	logLines = logLines[:len(logLines)-1] // after the last newline
	require.Len(t, logLines, 2*len(exampleOps), "a start and a finish record per operation")
	var finishes int
	for _, l := range logLines {
		if strings.Contains(l, `"phase":"finish"`) {
			finishes++
		}
		assert.True(t, fromSpans[l], "the span maps to the same line:\n%s", l)
	}
	assert.Equal(t, len(exampleOps), finishes)
}
