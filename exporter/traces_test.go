package sandboxauditexporter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

var (
	execStart  = time.Date(2026, 3, 14, 15, 9, 26, 535897123, time.UTC)
	writeStart = time.Date(2026, 3, 14, 15, 9, 30, 0, time.UTC)
	readStart  = time.Date(2026, 3, 14, 15, 9, 31, 250000999, time.UTC)
)

// sampleSpans: an exec with every attribute and raw output, a write with
// derived ids and seqs, a failed read in another session, a span that is
// not a sandbox span and a sandbox span with an unknown op.
func sampleSpans() []spanSpec {
	return []spanSpec{
		{
			name: "sandbox.exec", spanID: "00f067aa0ba902b7", parentID: "53995c3f42cd8ad8",
			start: execStart, end: execStart.Add(1500250 * time.Microsecond),
			attrs: map[string]any{
				"sandbox.operation":         "exec",
				"sandbox.session.id":        sessionA,
				"sandbox.backend":           "docker",
				"sandbox.event.start_seq":   1,
				"sandbox.event.finish_seq":  2,
				"sandbox.event.start_id":    "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e",
				"sandbox.event.finish_id":   "1c0e9d8f-7a6b-4c5d-9e3f-2a1b0c9d8e7f",
				"sandbox.start_data":        `{"cwd":"/w","command":["ls","-la"]}`,
				"sandbox.finish_data":       `{"exit_code":0}`,
				"sandbox.ok":                true,
				"sandbox.duration_ms":       1500.25,
				"sandbox.exec.stdout_bytes": []byte("hello\n"),
				"sandbox.exec.stderr_bytes": []byte("warn\xff"),
			},
		},
		{
			name: "sandbox.write", spanID: "a1b2c3d4e5f60718",
			start: writeStart, end: writeStart.Add(2 * time.Millisecond),
			attrs: map[string]any{
				"sandbox.operation":  "write",
				"sandbox.session.id": sessionA,
				"sandbox.start_data": `{"path":"/w/a.txt","bytes":12}`,
			},
		},
		{
			name: "sandbox.read", spanID: "c0ffee0000000001",
			start: readStart, end: readStart.Add(500 * time.Microsecond),
			statusError: true, statusMessage: "no such file",
			attrs: map[string]any{
				"sandbox.operation":        "read",
				"sandbox.session.id":       sessionB,
				"sandbox.event.start_seq":  1,
				"sandbox.event.finish_seq": 2,
				"sandbox.start_data":       `{"path":"/w/missing"}`,
				"sandbox.ok":               false,
				"sandbox.duration_ms":      0.5,
				"error.type":               "FileNotFoundError",
				"sandbox.error.code":       "workspace_read_not_found",
				"sandbox.error.message":    "no such file",
				"sandbox.error.retryable":  false,
			},
		},
		{
			name: "GET /healthz", spanID: "1111111111111111",
			start: execStart, end: execStart.Add(time.Millisecond),
			attrs: map[string]any{"http.request.method": "GET"},
		},
		{
			name: "sandbox.frobnicate", spanID: "2222222222222222",
			start: execStart, end: execStart.Add(time.Millisecond),
			attrs: map[string]any{
				"sandbox.operation":  "frobnicate",
				"sandbox.session.id": sessionA,
			},
		},
	}
}

// Hand-written expected events for sampleSpans under the default policy.
func execStartJSON() string {
	return `{"version":1,"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ts":"2026-03-14T15:09:26.535897Z",
	"session_id":"` + sessionA + `","seq":1,"op":"exec","phase":"start","span_id":"00f067aa0ba902b7",
	"parent_span_id":"53995c3f42cd8ad8","trace_id":"` + traceHex + `","data":{"command":["ls","-la"],"cwd":"/w"}}`
}

func execFinishJSON(stdout, stderr string) string {
	return `{"version":1,"event_id":"1c0e9d8f-7a6b-4c5d-9e3f-2a1b0c9d8e7f","ts":"2026-03-14T15:09:28.036147Z",
	"session_id":"` + sessionA + `","seq":2,"op":"exec","phase":"finish","span_id":"00f067aa0ba902b7",
	"parent_span_id":"53995c3f42cd8ad8","trace_id":"` + traceHex + `","data":{"exit_code":0},
	"ok":true,"duration_ms":1500.25,"error_code":null,"error_type":null,"error_message":null,
	"error_retryable":null,"stdout":` + stdout + `,"stderr":` + stderr + `}`
}

func writeStartJSON(data string) string {
	return `{"version":1,"event_id":"` + derivedID("a1b2c3d4e5f60718", "start") + `","ts":"2026-03-14T15:09:30Z",
	"session_id":"` + sessionA + `","seq":3,"op":"write","phase":"start","span_id":"a1b2c3d4e5f60718",
	"parent_span_id":null,"trace_id":"` + traceHex + `","data":` + data + `}`
}

func writeFinishJSON(data string) string {
	return `{"version":1,"event_id":"` + derivedID("a1b2c3d4e5f60718", "finish") + `","ts":"2026-03-14T15:09:30.002Z",
	"session_id":"` + sessionA + `","seq":4,"op":"write","phase":"finish","span_id":"a1b2c3d4e5f60718",
	"parent_span_id":null,"trace_id":"` + traceHex + `","data":` + data + `,
	"ok":true,"duration_ms":2.0,"error_code":null,"error_type":null,"error_message":null,
	"error_retryable":null,"stdout":null,"stderr":null}`
}

func readStartJSON() string {
	return `{"version":1,"event_id":"` + derivedID("c0ffee0000000001", "start") + `","ts":"2026-03-14T15:09:31.250000Z",
	"session_id":"` + sessionB + `","seq":1,"op":"read","phase":"start","span_id":"c0ffee0000000001",
	"parent_span_id":null,"trace_id":"` + traceHex + `","data":{"path":"/w/missing"}}`
}

func readFinishJSON() string {
	return `{"version":1,"event_id":"` + derivedID("c0ffee0000000001", "finish") + `","ts":"2026-03-14T15:09:31.250500Z",
	"session_id":"` + sessionB + `","seq":2,"op":"read","phase":"finish","span_id":"c0ffee0000000001",
	"parent_span_id":null,"trace_id":"` + traceHex + `","data":{"path":"/w/missing"},
	"ok":false,"duration_ms":0.5,"error_code":"workspace_read_not_found","error_type":"FileNotFoundError",
	"error_message":"no such file","error_retryable":false,"stdout":null,"stderr":null}`
}

const writeData = `{"path":"/w/a.txt","bytes":12}`

// expectedDefault is the six lines of sampleSpans under the default policy.
func expectedDefault(t *testing.T) []string {
	return []string{
		canonical(t, execStartJSON()),
		canonical(t, execFinishJSON("null", "null")),
		canonical(t, writeStartJSON(writeData)),
		canonical(t, writeFinishJSON(writeData)),
		canonical(t, readStartJSON()),
		canonical(t, readFinishJSON()),
	}
}

func TestTracesToFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit", "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	te := startExporters(t, cfg)

	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))

	want := expectedDefault(t)
	assert.Equal(t, want, readLines(t, path))
	// Sanity check of the hand-written expectations: redaction by default
	// means no exec output anywhere in the file.
	assert.Contains(t, want[1], `"stdout":null`)
	assert.Contains(t, want[1], `"stderr":null`)
	assert.NotContains(t, strings.Join(readLines(t, path), ""), "hello")

	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_written", "sink", "file"))
	assert.Equal(t, int64(1), te.counter(t, "otelcol_sandboxaudit_exporter_items_skipped", "reason", "not_sandbox_span"))
	assert.Equal(t, int64(1), te.counter(t, "otelcol_sandboxaudit_exporter_items_skipped", "reason", "invalid_span"))

	// A second batch appends; seqs the mapper assigns keep counting.
	again := sampleSpans()[1]
	again.spanID = "a1b2c3d4e5f60719"
	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, again)))
	lines := readLines(t, path)
	require.Len(t, lines, 8)
	assert.Contains(t, lines[6], `"seq":5`)
	assert.Contains(t, lines[7], `"seq":6`)
}

func TestTracesExecOutputOptInByOp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	cfg.PayloadPolicyByOp = map[string]auditevent.PolicyOverride{"exec": {IncludeExecOutput: auditevent.Ptr(true)}}
	withFile(cfg, path, auditevent.PolicyOverride{})
	te := startExporters(t, cfg)

	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))

	want := expectedDefault(t)
	// Invalid UTF-8 becomes U+FFFD, which the canonical line escapes.
	want[1] = canonical(t, execFinishJSON(`"hello\n"`, `"warn\ufffd"`))
	assert.Contains(t, want[1], `"stderr":"warn\ufffd"`)
	assert.Equal(t, want, readLines(t, path))
}

func TestTracesExecOutputTruncatedBySinkPolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	cfg.PayloadPolicy = auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(true)}
	withFile(cfg, path, auditevent.PolicyOverride{MaxStdoutChars: auditevent.Ptr(3)})
	te := startExporters(t, cfg)

	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))

	lines := readLines(t, path)
	require.Len(t, lines, 6)
	assert.Equal(t, canonical(t, execFinishJSON(`"hel\u2026"`, `"warn\ufffd"`)), lines[1])
}

func TestTracesIncludeWriteLenFalse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{IncludeWriteLen: auditevent.Ptr(false)})
	te := startExporters(t, cfg)

	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))

	want := expectedDefault(t)
	want[2] = canonical(t, writeStartJSON(`{"path":"/w/a.txt"}`))
	want[3] = canonical(t, writeFinishJSON(`{"path":"/w/a.txt"}`))
	assert.Equal(t, want, readLines(t, path))
}

func TestTracesTemplatedPathPerSession(t *testing.T) {
	for _, tc := range []struct {
		name     string
		template string
		fileA    string
		fileB    string
	}{
		{"id", "{session_id}.jsonl", sessionA + ".jsonl", sessionB + ".jsonl"},
		{"hex", "{session_id_hex}/events.jsonl", "6f1c2a8e3b4d4e5f9a0b1c2d3e4f5a6b/events.jsonl", "0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d/events.jsonl"},
	} {
		// Subtest names without braces: t.TempDir embeds the name.
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "audit")
			cfg := syncConfig()
			withFile(cfg, filepath.Join(dir, tc.template), auditevent.PolicyOverride{})
			te := startExporters(t, cfg)

			require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))

			want := expectedDefault(t)
			assert.Equal(t, want[:4], readLines(t, filepath.Join(dir, tc.fileA)))
			assert.Equal(t, want[4:], readLines(t, filepath.Join(dir, tc.fileB)))
			for _, f := range []string{tc.fileA, tc.fileB} {
				fi, err := os.Stat(filepath.Join(dir, f))
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
			}
			assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_written", "sink", "file"))
		})
	}
}

func TestTracesSameConfigSharesSinks(t *testing.T) {
	// Traces and logs of one component write through the same sinks, and
	// the sinks stay open until the last of them shuts down.
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	te := startExporters(t, cfg)

	require.NoError(t, te.logs.Shutdown(context.Background()))
	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	assert.Len(t, readLines(t, path), 6)
}

func TestStartFailsOnUnwritableSpool(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "not-a-dir")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))

	cfg := syncConfig()
	hc := withHTTP(cfg, "http://127.0.0.1:9/v1/sandbox/events", "ndjson", auditevent.PolicyOverride{})
	hc.Spool.GetOrInsertDefault().Path = filepath.Join(blocker, "spool.jsonl")
	require.NoError(t, cfg.Validate())

	f := NewFactory()
	tr, err := f.CreateTraces(context.Background(), exportertestSettings(), cfg)
	require.NoError(t, err)
	err = tr.Start(context.Background(), nopHost())
	require.ErrorContains(t, err, "spool")
	require.NoError(t, tr.Shutdown(context.Background()))
}

// TestTracesSeqSessionsEvicted runs the exporter with a span mapper that
// keeps seq counters for two sessions (the production bound, 10 000, is not
// configurable): a third session's spans without seq attributes evict the
// least recently used counter, which is counted and warned about once per
// batch, without session ids.
func TestTracesSeqSessionsEvicted(t *testing.T) {
	const sessionC = "9e8d7c6b-5a49-4382-a170-f6e5d4c3b2a1"
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	core, logs := observer.New(zapcore.InfoLevel)
	set := exportertestSettings()
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = zap.New(core)

	e, err := newAuditExporter(cfg, set, newFileClaims())
	require.NoError(t, err)
	e.mapper = spanmap.NewMapper(2)
	ctx := context.Background()
	require.NoError(t, e.Start(ctx, nopHost()))
	t.Cleanup(func() { require.NoError(t, e.Shutdown(context.Background())) })

	// A write span without seq attributes: the mapper assigns both seqs.
	span := func(session, spanID string) spanSpec {
		return spanSpec{
			name: "sandbox.write", spanID: spanID,
			start: writeStart, end: writeStart.Add(time.Millisecond),
			attrs: map[string]any{
				"sandbox.operation":  "write",
				"sandbox.session.id": session,
				"sandbox.start_data": `{"path":"/w/a.txt","bytes":12}`,
			},
		}
	}
	evicted := func() int64 {
		m, err := tel.GetMetric("otelcol_sandboxaudit_exporter_seq_sessions_evicted")
		if err != nil {
			return 0
		}
		return sumPoints(m, "", "")
	}
	warnings := func() []observer.LoggedEntry { return logs.FilterLevelExact(zapcore.WarnLevel).All() }

	// Two sessions fit.
	require.NoError(t, e.pushTraces(ctx, buildTraces(t, span(sessionA, "0000000000000001"), span(sessionB, "0000000000000002"))))
	assert.Zero(t, evicted())
	assert.Empty(t, warnings())

	// Session C pushes out A (least recently used); A's next span then
	// pushes out B and its seqs start again at 1: two evictions, one batch,
	// one warning.
	require.NoError(t, e.pushTraces(ctx, buildTraces(t, span(sessionC, "0000000000000003"), span(sessionA, "0000000000000004"))))
	assert.Equal(t, int64(2), evicted())
	w := warnings()
	require.Len(t, w, 1)
	assert.Equal(t, map[string]any{"sessions": int64(2)}, w[0].ContextMap())
	for _, id := range []string{sessionA, sessionB, sessionC} {
		assert.NotContains(t, w[0].Message, id)
	}
	lines := readLines(t, path)
	require.Len(t, lines, 8)
	assert.Contains(t, lines[6], `"session_id":"`+sessionA+`"`)
	assert.Contains(t, lines[6], `"seq":1,`, "A's seqs restart after eviction")

	// Sessions already held: nothing new to count or log.
	require.NoError(t, e.pushTraces(ctx, buildTraces(t, span(sessionC, "0000000000000005"), span(sessionA, "0000000000000006"))))
	assert.Equal(t, int64(2), evicted())
	assert.Len(t, warnings(), 1)
}
