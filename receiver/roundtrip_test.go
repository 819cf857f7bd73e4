package sandboxauditreceiver_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"

	sandboxauditexporter "github.com/sandboxaudit/sandboxaudit/exporter"
	sandboxauditreceiver "github.com/sandboxaudit/sandboxaudit/receiver"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

const rtSession = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"

// Two audit log records as the Python HttpProxySink's events would arrive
// in a logs pipeline: pydantic field order, a +00:00 offset, a non-ASCII
// path, an integer beyond 64 bits, and a stdout string its policy already
// produced. rtLogLines are their canonical lines, written out by hand from
// docs/format.md, "The canonical line".
var (
	rtLogBodies = []string{
		`{"version":1,"event_id":"1c4ae2a2-5b7e-4f3a-9c1d-2e3f4a5b6c7d","ts":"2026-03-14T15:09:26.535897+00:00","session_id":"` + rtSession + `","seq":5,"op":"read","phase":"start","span_id":"sandbox_op_3","parent_span_id":null,"trace_id":null,"data":{"path":"/w/ä.txt","size":1180591620717411303424}}`,
		`{"version":1,"event_id":"2d5bf3b3-6c8f-4a4b-8d2e-3f4a5b6c7d8e","ts":"2026-03-14T15:09:26.786022Z","session_id":"` + rtSession + `","seq":6,"op":"read","phase":"finish","span_id":"sandbox_op_3","parent_span_id":null,"trace_id":null,"data":{"bytes":12},"ok":false,"duration_ms":250,"error_code":null,"error_type":"FileNotFoundError","error_message":"no such file","error_retryable":false,"stdout":"out","stderr":null}`,
	}
	rtLogLines = []string{
		`{"data":{"path":"/w/\u00e4.txt","size":1180591620717411303424},"event_id":"1c4ae2a2-5b7e-4f3a-9c1d-2e3f4a5b6c7d","op":"read","parent_span_id":null,"phase":"start","seq":5,"session_id":"` + rtSession + `","span_id":"sandbox_op_3","trace_id":null,"ts":"2026-03-14T15:09:26.535897Z","version":1}` + "\n",
		`{"data":{"bytes":12},"duration_ms":250.0,"error_code":null,"error_message":"no such file","error_retryable":false,"error_type":"FileNotFoundError","event_id":"2d5bf3b3-6c8f-4a4b-8d2e-3f4a5b6c7d8e","ok":false,"op":"read","parent_span_id":null,"phase":"finish","seq":6,"session_id":"` + rtSession + `","span_id":"sandbox_op_3","stderr":null,"stdout":"out","trace_id":null,"ts":"2026-03-14T15:09:26.786022Z","version":1}` + "\n",
	}
)

// rtTraces holds two sandbox spans (an exec with raw output, a failed
// write) and a span of something else, which maps to no event.
func rtTraces(t *testing.T) ptrace.Traces {
	t.Helper()
	start := time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	add := func(spanID byte, attrs map[string]any) {
		s := spans.AppendEmpty()
		s.SetName("sandbox." + attrs["sandbox.operation"].(string))
		s.SetTraceID(pcommon.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36})
		s.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, spanID})
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(250 * time.Millisecond)))
		require.NoError(t, s.Attributes().FromRaw(attrs))
	}
	add(1, map[string]any{
		"sandbox.operation":         "exec",
		"sandbox.session.id":        rtSession,
		"sandbox.event.start_seq":   int64(1),
		"sandbox.event.finish_seq":  int64(2),
		"sandbox.start_data":        `{"command":["sh","-lc","ls"],"timeout_s":30.0}`,
		"sandbox.ok":                true,
		"sandbox.duration_ms":       250.5,
		"sandbox.exec.stdout_bytes": []byte("hello w\xc3\xb6rld\n"),
	})
	add(2, map[string]any{
		"sandbox.operation":        "write",
		"sandbox.session.id":       rtSession,
		"sandbox.event.start_seq":  int64(3),
		"sandbox.event.finish_seq": int64(4),
		"sandbox.start_data":       `{"path":"/w/a.txt","bytes":4}`,
		"sandbox.ok":               false,
		"error.type":               "PermissionError",
		"sandbox.error.code":       "workspace_write_type_error",
		"sandbox.error.message":    "denied",
		"sandbox.error.retryable":  false,
	})
	other := spans.AppendEmpty()
	other.SetName("GET /")
	other.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	other.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	return td
}

// rtLogs holds the audit records and a log record that is not one.
func rtLogs() plog.Logs {
	ld := plog.NewLogs()
	records := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i, body := range rtLogBodies {
		lr := records.AppendEmpty()
		lr.SetEventName([]string{"sandbox.session.start", "sandbox.session.finish"}[i])
		lr.Body().SetStr(body)
	}
	records.AppendEmpty().Body().SetStr("an application log line")
	return ld
}

func rtFreeEndpoint(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// rtExporter creates a sandboxaudit exporter from raw configuration, as a
// collector would, and returns its traces and logs halves (one component:
// they share the sinks).
func rtExporter(t *testing.T, raw map[string]any) (exporter.Traces, exporter.Logs) {
	t.Helper()
	f := sandboxauditexporter.NewFactory()
	cfg := f.CreateDefaultConfig()
	require.NoError(t, confmap.NewFromStringMap(raw).Unmarshal(&cfg))
	require.NoError(t, confmap.Validate(cfg))
	set := exportertest.NewNopSettings(f.Type())
	ctx := context.Background()
	te, err := f.CreateTraces(ctx, set, cfg)
	require.NoError(t, err)
	le, err := f.CreateLogs(ctx, set, cfg)
	require.NoError(t, err)
	return te, le
}

func startAll(t *testing.T, comps ...component.Component) {
	t.Helper()
	for _, c := range comps {
		require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	}
	t.Cleanup(func() {
		for _, c := range comps {
			assert.NoError(t, c.Shutdown(context.Background()))
		}
	})
}

// TestRoundTripExporterReceiverExporter sends spans and audit records
// through a sandboxaudit exporter whose http sink posts to the receiver; the
// receiver's logs go to a second exporter with a file sink. The second file
// must hold exactly the lines the first exporter sent, which its own file
// sink (same policy as its http sink) records independently.
func TestRoundTripExporterReceiverExporter(t *testing.T) {
	for _, format := range []string{"event", "ndjson"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			sentPath := filepath.Join(dir, "sent.jsonl")
			receivedPath := filepath.Join(dir, "received.jsonl")
			endpoint := rtFreeEndpoint(t)

			// Downstream: receiver -> exporter with a file sink. Exec
			// output is let through, so strings that arrive stay as
			// they are (docs/format.md, "The payload policy").
			_, fileLogs := rtExporter(t, map[string]any{
				"payload_policy": map[string]any{"include_exec_output": true},
				"file":           map[string]any{"path": receivedPath},
				"sending_queue":  map[string]any{"enabled": false},
			})
			rf := sandboxauditreceiver.NewFactory()
			rcfg := rf.CreateDefaultConfig()
			require.NoError(t, confmap.NewFromStringMap(map[string]any{"endpoint": endpoint}).Unmarshal(&rcfg))
			require.NoError(t, confmap.Validate(rcfg))
			rcv, err := rf.CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), rcfg, fileLogs)
			require.NoError(t, err)

			// Upstream: exporter with an http sink to the receiver and a
			// file sink recording what it sent. Exec output truncated to
			// 6 characters, so the policy visibly ran before sending.
			sendTraces, sendLogs := rtExporter(t, map[string]any{
				"payload_policy": map[string]any{"include_exec_output": true, "max_stdout_chars": 6},
				"file":           map[string]any{"path": sentPath},
				"http": map[string]any{
					"endpoint": "http://" + endpoint + "/v1/sandbox/events",
					"format":   format,
				},
				"sending_queue": map[string]any{"enabled": false},
			})

			// Started downstream first, shut down upstream first (cleanups
			// run in reverse).
			startAll(t, fileLogs, rcv, sendTraces, sendLogs)

			// Without a sending queue, Consume returns once every sink
			// wrote, and the receiver answers only after the second
			// exporter wrote: no waiting needed below.
			ctx := context.Background()
			require.NoError(t, sendTraces.ConsumeTraces(ctx, rtTraces(t)))
			require.NoError(t, sendLogs.ConsumeLogs(ctx, rtLogs()))

			sent, err := os.ReadFile(sentPath)
			require.NoError(t, err)
			received, err := os.ReadFile(receivedPath)
			require.NoError(t, err)

			// What was sent is what docs/format.md says: two events per sandbox span,
			// the audit records' canonical lines, nothing else.
			sentLines := strings.SplitAfter(string(sent), "\n")
			require.Equal(t, "", sentLines[len(sentLines)-1])
			sentLines = sentLines[:len(sentLines)-1]
			require.Len(t, sentLines, 6, "%s", sent)
			assert.Equal(t, rtLogLines, sentLines[4:])
			assert.Contains(t, sentLines[1], `"stdout":"hello \u2026"`)
			assert.Contains(t, sentLines[3], `"error_code":"workspace_write_type_error"`)

			// And the receiving side wrote exactly those bytes, in order.
			assert.Equal(t, string(sent), string(received))
		})
	}
}
