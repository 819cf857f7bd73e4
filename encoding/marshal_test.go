package sandboxauditencoding

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	sandboxauditexporter "github.com/sandboxaudit/sandboxaudit/exporter"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/conformance"
)

// exporterFileLines runs td through the sandboxaudit exporter with a file
// sink under the given policy levels and returns the file: what the
// extension must produce for the same spans.
func exporterFileLines(t *testing.T, td ptrace.Traces, cfg *Config) []byte {
	t.Helper()
	f := sandboxauditexporter.NewFactory()
	ecfg := f.CreateDefaultConfig().(*sandboxauditexporter.Config)
	ecfg.PayloadPolicy = cfg.PayloadPolicy
	ecfg.PayloadPolicyByOp = cfg.PayloadPolicyByOp
	fc := f.CreateDefaultConfig().(*sandboxauditexporter.Config).File.GetOrInsertDefault()
	fc.Path = filepath.Join(t.TempDir(), "events.jsonl")
	ecfg.File = configoptional.Some(*fc)
	exp, err := f.CreateTraces(context.Background(), exportertest.NewNopSettings(f.Type()), ecfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	require.NoError(t, exp.Shutdown(context.Background()))
	b, err := os.ReadFile(fc.Path)
	require.NoError(t, err)
	return b
}

func TestMarshalTracesIsTheExporterFile(t *testing.T) {
	for name, cfg := range map[string]*Config{
		"default policy": {},
		"exec output for exec, no write length": {
			PayloadPolicy: auditevent.PolicyOverride{IncludeWriteLen: auditevent.Ptr(false)},
			PayloadPolicyByOp: map[string]auditevent.PolicyOverride{
				"exec": {IncludeExecOutput: auditevent.Ptr(true), MaxStdoutChars: auditevent.Ptr(5)},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			td := sandboxTraces(3, 4)
			want := exporterFileLines(t, td, cfg)
			require.Equal(t, 3*4*2, bytes.Count(want, []byte("\n")))

			got, err := newExt(t, cfg, nil).MarshalTraces(td)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

func TestMarshalTracesPolicy(t *testing.T) {
	td := sandboxTraces(1, 2) // exec, write
	got, err := newExt(t, &Config{}, nil).MarshalTraces(td)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	require.Len(t, lines, 4)
	// Default policy: exec output redacted, write length kept.
	assert.Contains(t, lines[1], `"stderr":null`)
	assert.Contains(t, lines[1], `"stdout":null`)
	assert.Contains(t, lines[2], `"data":{"bytes":12,"path":"/workspace/notes.txt"}`)

	cfg := &Config{PayloadPolicyByOp: map[string]auditevent.PolicyOverride{
		"exec":  {IncludeExecOutput: auditevent.Ptr(true), MaxStdoutChars: auditevent.Ptr(9)},
		"write": {IncludeWriteLen: auditevent.Ptr(false)},
	}}
	got, err = newExt(t, cfg, nil).MarshalTraces(td)
	require.NoError(t, err)
	lines = strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	// "total 0\n\xffdrwx é": the invalid byte becomes U+FFFD, 9 code points
	// are kept, then the ellipsis.
	assert.Contains(t, lines[1], `"stdout":"total 0\n\ufffd\u2026"`)
	assert.Contains(t, lines[1], `"stderr":"ls: warning"`)
	assert.Contains(t, lines[2], `"data":{"path":"/workspace/notes.txt"}`)
}

func TestMarshalTracesSkipsAndCounts(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	ext := newExt(t, &Config{}, tt)

	td := sandboxTraces(2, 1) // two roots (not sandbox spans), two exec spans
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	bad := spans.AppendEmpty()
	spans.At(1).CopyTo(bad)
	bad.Attributes().PutStr("sandbox.operation", "teleport") // not an op
	bad.Attributes().PutStr("sandbox.start_data", `{"secret":"s3cr3t"}`)

	got, err := ext.MarshalTraces(td)
	require.NoError(t, err, "a bad span must not fail the batch")
	assert.Equal(t, 4, bytes.Count(got, []byte("\n")))
	assert.NotContains(t, string(got), "teleport")

	skipped, ok := counter(t, tt, "otelcol_sandboxaudit_encoding_items_skipped")
	require.True(t, ok)
	assert.Equal(t, map[string]int64{"not_sandbox_span": 2, "invalid_span": 1}, skipped)
	marshaled, ok := counter(t, tt, "otelcol_sandboxaudit_encoding_events_marshaled")
	require.True(t, ok)
	assert.Equal(t, map[string]int64{"": 4}, marshaled)

	// Only non-sandbox spans: an empty message, not an error.
	roots := ptrace.NewTraces()
	spans.At(0).CopyTo(roots.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty())
	got, err = ext.MarshalTraces(roots)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// TestMarshalLogsConformance reads every accepted conformance vector (the
// Python reference's input and its canonical line) as a message, and
// requires UnmarshalLogs + MarshalLogs to give the reference's lines.
func TestMarshalLogsConformance(t *testing.T) {
	vectors, err := conformance.LoadAll()
	require.NoError(t, err)
	var in, want strings.Builder
	n := 0
	for _, v := range vectors {
		if v.Kind != "encode" {
			continue
		}
		line, err := v.ExpectString()
		require.NoError(t, err, v.Source)
		if strings.Contains(v.Input, "\n") || !hasIDAndTS(v.Input) {
			continue // one event per line; defaults (a new uuid4, now) cannot be compared
		}
		in.WriteString(v.Input + "\n")
		want.WriteString(line)
		n++
	}
	require.Greater(t, n, 10, "accept vectors used")

	ext := newExt(t, execOutputConfig(), nil)
	ld, err := ext.UnmarshalLogs([]byte(in.String()))
	require.NoError(t, err)
	require.Equal(t, n, ld.LogRecordCount())
	got, err := ext.MarshalLogs(ld)
	require.NoError(t, err)
	assert.Equal(t, want.String(), string(got))
}

// TestMarshalLogsPolicyConformance applies the reference's policy vectors
// through the extension: the record carries the raw output as the receiver
// would, and the extension's two policy levels resolve as the reference's.
func TestMarshalLogsPolicyConformance(t *testing.T) {
	vectors, err := conformance.LoadAll()
	require.NoError(t, err)
	n := 0
	for _, v := range vectors {
		if v.Kind != "policy" || v.SinkPolicy != nil || !hasIDAndTS(v.Input) {
			continue // the extension has no sink level
		}
		want, err := v.ExpectString()
		require.NoError(t, err, v.Source)
		cfg := &Config{PayloadPolicyByOp: v.PolicyByOp}
		if v.Policy != nil {
			cfg.PayloadPolicy = *v.Policy
		}
		ext := newExt(t, cfg, nil)
		ld, err := ext.UnmarshalLogs([]byte(v.Input))
		require.NoError(t, err, v.Source)
		attrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes()
		for key, b64 := range map[string]*string{"sandbox.exec.stdout_bytes": v.StdoutB64, "sandbox.exec.stderr_bytes": v.StderrB64} {
			if b64 != nil {
				raw, err := base64.StdEncoding.DecodeString(*b64)
				require.NoError(t, err, v.Source)
				attrs.PutEmptyBytes(key).FromRaw(raw)
			}
		}
		got, err := ext.MarshalLogs(ld)
		require.NoError(t, err)
		assert.Equal(t, want, string(got), "%s (%s)", v.Name, v.Source)
		n++
	}
	require.Greater(t, n, 5, "policy vectors used")
}

func hasIDAndTS(input string) bool {
	return strings.Contains(input, `"event_id"`) && strings.Contains(input, `"ts"`)
}

func TestMarshalLogsPolicyAndSkips(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })

	// Records as the receiver makes them: raw exec output in bytes
	// attributes, which only the policy turns into stdout.
	ld, err := newExt(t, &Config{}, nil).UnmarshalLogs(mustMarshalTraces(t, sandboxTraces(1, 1)))
	require.NoError(t, err)
	finish := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(1)
	finish.Attributes().PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw([]byte("hello\n"))
	other := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty()
	other.Body().SetStr("an application log")
	broken := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty()
	broken.SetEventName("sandbox.session.start")
	broken.Body().SetStr(`{"op":"exec","secret":"s3cr3t"}`)

	got, err := newExt(t, execOutputConfig(), tt).MarshalLogs(ld)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[1], `"stdout":"hello\n"`)

	skipped, ok := counter(t, tt, "otelcol_sandboxaudit_encoding_items_skipped")
	require.True(t, ok)
	assert.Equal(t, map[string]int64{"not_audit_event": 1, "invalid_event": 1}, skipped)

	got, err = newExt(t, &Config{}, nil).MarshalLogs(ld)
	require.NoError(t, err)
	assert.Contains(t, string(got), `"stdout":null`, "default policy redacts")
	assert.NotContains(t, string(got), "hello")

	empty, err := newExt(t, &Config{}, nil).MarshalLogs(plog.NewLogs())
	require.NoError(t, err)
	assert.Empty(t, empty)
}

func mustMarshalTraces(t *testing.T, td ptrace.Traces) []byte {
	t.Helper()
	b, err := newExt(t, execOutputConfig(), nil).MarshalTraces(td)
	require.NoError(t, err)
	return b
}

// TestMarshalNeverFailsATraceWhoseItemsAreAllMalformed: the exporter
// refuses a batch whose sandbox items were all malformed, but the kafka
// exporter (partition_*_by_trace_id) marshals a request one trace at a
// time and drops the whole request on the first error, so a refusal here
// would lose the valid traces beside it. The malformed ones are counted
// and logged, and an empty message is produced.
func TestMarshalNeverFailsATraceWhoseItemsAreAllMalformed(t *testing.T) {
	ext := newExt(t, &Config{}, nil)
	ld := plog.NewLogs()
	rec := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	rec.SetEventName("sandbox.session.start")
	rec.Body().SetStr(`{"op":"launch_missiles"}`)
	got, err := ext.MarshalLogs(ld)
	require.NoError(t, err)
	assert.Empty(t, got)

	td := sandboxTraces(1, 1)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		spans.At(i).Attributes().PutStr("sandbox.operation", "teleport")
	}
	got, err = ext.MarshalTraces(td)
	require.NoError(t, err)
	assert.Empty(t, got)
}
