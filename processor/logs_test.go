package sandboxauditprocessor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

const (
	logSession = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	logIDs     = `"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ts":"2026-03-14T15:09:26.535897Z","session_id":"` + logSession +
		`","seq":1,"op":"exec","span_id":"00f067aa0ba902b7","parent_span_id":null,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`
)

// secretEvents is an exec's start event, its command and environment full
// of credentials and a write length in its data, and its finish event with
// credentials in the error message and the raw stdout and stderr.
func secretEvents(t *testing.T) []auditevent.Event {
	t.Helper()
	data, err := json.Marshal(map[string]any{"command": redacttest.Argv(), "env": redacttest.Env(), "bytes": 12})
	require.NoError(t, err)
	start, err := auditevent.DecodeString(fmt.Sprintf(`{"version":1,%s,"phase":"start","data":%s}`, logIDs, data))
	require.NoError(t, err)
	msg, err := json.Marshal(redacttest.Text())
	require.NoError(t, err)
	finish, err := auditevent.DecodeString(fmt.Sprintf(`{"version":1,%s,"phase":"finish","data":{},"ok":false,"duration_ms":1.5,`+
		`"error_type":"ExitError","error_code":null,"error_message":%s,"error_retryable":null,"stdout":null,"stderr":null}`, logIDs, msg))
	require.NoError(t, err)
	finish.StdoutBytes = []byte(redacttest.Text())
	finish.StderrBytes = []byte("stderr: " + redacttest.GitHubToken)
	return []auditevent.Event{start, finish}
}

// secretLogs is secretEvents as records in the representation the receiver
// and sandboxtrace's write-ahead start records use.
func secretLogs(t *testing.T) plog.Logs {
	t.Helper()
	return logmap.EventsToLogs(secretEvents(t), "test")
}

// userRules is the default config with the user pattern and key that
// redacttest's secrets include.
func userRules() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.PayloadPolicy.Redact = userRedact()
	return cfg
}

func processLogs(t *testing.T, cfg *Config, ld plog.Logs) plog.Logs {
	t.Helper()
	sink := &consumertest.LogsSink{}
	p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(typ), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.ConsumeLogs(context.Background(), ld))
	require.Len(t, sink.AllLogs(), 1)
	return sink.AllLogs()[0]
}

// oneRecord is logs holding one empty record, and that record.
func oneRecord() (plog.Logs, plog.LogRecord) {
	ld := plog.NewLogs()
	return ld, ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
}

func records(ld plog.Logs) plog.LogRecordSlice {
	return ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
}

// recordText is everything a log backend gets of a record.
func recordText(t *testing.T, lr plog.LogRecord) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"body": lr.Body().AsRaw(), "attrs": lr.Attributes().AsRaw()})
	require.NoError(t, err)
	return string(b)
}

func assertNoSecret(t *testing.T, text string) {
	t.Helper()
	for _, s := range redacttest.Secrets() {
		assert.NotContains(t, text, s)
	}
}

func TestLogsDefaultPolicyCutsSecretsAndOutput(t *testing.T) {
	in := secretLogs(t)
	require.Contains(t, recordText(t, records(in).At(0)), redacttest.GitHubToken, "the input must hold the secret")
	out := records(processLogs(t, userRules(), in))
	require.Equal(t, 2, out.Len())
	for i := range out.Len() {
		lr := out.At(i)
		assertNoSecret(t, recordText(t, lr))
		assert.NotContains(t, lr.Attributes().AsRaw(), "sandbox.exec.stdout_bytes")
		assert.NotContains(t, lr.Attributes().AsRaw(), "sandbox.exec.stderr_bytes")
		assert.Equal(t, logSession, lr.Attributes().AsRaw()["sandbox.session.id"])
		e, dropped, err := logmap.FromLogRecord(lr)
		require.NoError(t, err, "the record still maps")
		require.NoError(t, dropped)
		assert.Nil(t, e.Stdout)
		assert.Nil(t, e.Stderr)
	}
	assert.Contains(t, out.At(0).Body().Str(), `"bytes":12`, "write length kept by default")
	assert.Contains(t, out.At(0).Body().Str(), `"HOME":"/home/agent"`, "what is not a secret stays")
}

func TestLogsOutputIncludedIsDecodedAndRedacted(t *testing.T) {
	cfg := userRules()
	cfg.PayloadPolicy.IncludeExecOutput = auditevent.Ptr(true)
	out := records(processLogs(t, cfg, secretLogs(t)))
	finish := out.At(1)
	assertNoSecret(t, recordText(t, finish))
	for _, k := range []string{"sandbox.exec.stdout_bytes", "sandbox.exec.stderr_bytes", "sandbox.exec.stdout", "sandbox.exec.stderr"} {
		assert.NotContains(t, finish.Attributes().AsRaw(), k, "the body holds the output, once")
	}
	e, _, err := logmap.FromLogRecord(finish)
	require.NoError(t, err)
	require.NotNil(t, e.Stderr)
	assert.Contains(t, *e.Stderr, "stderr: ", "the output is in the body")
}

func TestLogsOtherRecordsPassUnchanged(t *testing.T) {
	ld := plog.NewLogs()
	rs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	plain := rs.AppendEmpty()
	plain.Body().SetStr("login with token " + redacttest.GitHubToken)
	plain.Attributes().PutStr("user", "alice")
	named := rs.AppendEmpty()
	named.SetEventName("app.event")
	named.Body().SetStr(`{"op":"exec"}`)
	named.Attributes().PutStr("sandbox.operation", "exec")
	want := plog.NewLogs()
	ld.CopyTo(want)
	got := processLogs(t, userRules(), ld)
	assert.Equal(t, want, got)
}

// TestLogsPayloadAttributesOnOtherRecords: a record that is not an audit
// event but carries payload attributes under their sandbox names gets them
// as a span would: no exec output, data and error message redacted.
func TestLogsPayloadAttributesOnOtherRecords(t *testing.T) {
	ld, lr := oneRecord()
	lr.Body().SetStr("exec finished")
	lr.Attributes().PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw([]byte("out"))
	lr.Attributes().PutStr("sandbox.error.message", "failed with "+redacttest.GitHubToken)
	got := records(processLogs(t, userRules(), ld)).At(0)
	assert.Equal(t, "exec finished", got.Body().Str())
	assert.NotContains(t, got.Attributes().AsRaw(), "sandbox.exec.stdout_bytes")
	assertNoSecret(t, recordText(t, got))
	assert.Contains(t, got.Attributes().AsRaw(), "sandbox.error.message")
}

// TestLogsMalformedEventRecord: a record named as an audit event that does
// not map gets no audit line, so its body and exec output do not pass; its
// other attributes do, redacted.
func TestLogsMalformedEventRecord(t *testing.T) {
	bodies := map[string]func(v pcommon.Value){
		"invalid line": func(v pcommon.Value) {
			v.SetStr(`{"version":1,"op":"exec","phase":"start","data":{"command":["curl","` + redacttest.GitHubToken + `"]}}`)
		},
		"not json": func(v pcommon.Value) { v.SetStr("curl " + redacttest.GitHubToken) },
		"map": func(v pcommon.Value) {
			v.SetEmptyMap().PutStr("command", "curl "+redacttest.GitHubToken)
		},
	}
	for name, put := range bodies {
		t.Run(name, func(t *testing.T) {
			ld, lr := oneRecord()
			lr.SetEventName("sandbox.session.start")
			put(lr.Body())
			putSandbox(lr.Attributes(), "exec")
			lr.Attributes().PutStr("sandbox.exec.stdout_bytes", "b3V0cHV0")
			lr.Attributes().PutStr("sandbox.start_data", `{"command":["curl","`+redacttest.GitHubToken+`"]}`)
			lr.Attributes().PutStr("host", "box-1")
			require.Contains(t, recordText(t, lr), redacttest.GitHubToken)

			got := records(processLogs(t, userRules(), ld)).At(0)
			assertNoSecret(t, recordText(t, got))
			assert.Equal(t, pcommon.ValueTypeEmpty, got.Body().Type())
			attrs := got.Attributes().AsRaw()
			assert.NotContains(t, attrs, "sandbox.exec.stdout_bytes")
			assert.Equal(t, "box-1", attrs["host"])
			assert.Equal(t, logSession, attrs["sandbox.session.id"])
			assert.Contains(t, attrs["sandbox.start_data"], `"curl"`)
		})
	}
}

// TestLogsCountCuts: the cuts made in a record's body are counted by kind.
func TestLogsCountCuts(t *testing.T) {
	ctx := context.Background()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(ctx)) })
	set := processortest.NewNopSettings(typ)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	p, err := NewFactory().CreateLogs(ctx, set, userRules(), consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, p.ConsumeLogs(ctx, secretLogs(t)))

	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.Reader.Collect(ctx, &rm))
	github := int64(0)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "otelcol_sandboxaudit_processor_secrets_redacted" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if v, _ := dp.Attributes.Value("kind"); v.AsString() == "github_token" {
					github += dp.Value
				}
			}
		}
	}
	// Argv and Env hold three, the error message two.
	assert.Equal(t, int64(5), github)
}

// TestLogsTextOutputAttributesOnEventRecord: an audit event record that
// also carries exec output as text attributes, which the exporter does
// not read, passes without them: the body holds the output the file
// holds, and the attributes must not add output beyond it or its limit.
func TestLogsTextOutputAttributesOnEventRecord(t *testing.T) {
	cfg := userRules()
	cfg.PayloadPolicy.IncludeExecOutput = auditevent.Ptr(true)
	cfg.PayloadPolicy.MaxStdoutChars = auditevent.Ptr(5)
	ld := secretLogs(t)
	finish := records(ld).At(1)
	finish.Attributes().PutStr("sandbox.exec.stdout", "only-in-attribute "+strings.Repeat("x", 100))
	finish.Attributes().PutStr("sandbox.exec.stderr", "only-in-attribute too")
	start := records(ld).At(0)
	start.Attributes().PutStr("sandbox.exec.stdout", "start-output")

	out := records(processLogs(t, cfg, ld))
	for i := range out.Len() {
		text := recordText(t, out.At(i))
		assert.NotContains(t, text, "only-in-attribute")
		assert.NotContains(t, text, "start-output")
		assert.NotContains(t, out.At(i).Attributes().AsRaw(), "sandbox.exec.stdout")
		assert.NotContains(t, out.At(i).Attributes().AsRaw(), "sandbox.exec.stderr")
	}
	e, _, err := logmap.FromLogRecord(out.At(1))
	require.NoError(t, err)
	require.NotNil(t, e.Stdout)
	assert.LessOrEqual(t, len([]rune(*e.Stdout)), 6, "the body's output is cut to the limit")
}

// TestLogsGovernedRecordBodyRedacted: a record the policy governs that is
// not an audit event (its name differs from the event names in case or
// spacing, or is another name) gets no audit line, but its text body
// reaches the backend; its secrets are cut there as in its attributes.
func TestLogsGovernedRecordBodyRedacted(t *testing.T) {
	data, err := json.Marshal(map[string]any{"command": redacttest.Argv(), "env": redacttest.Env()})
	require.NoError(t, err)
	line := `{"version":1,` + logIDs + `,"phase":"start","data":` + string(data) + `}`
	for _, name := range []string{"Sandbox.Session.Start", "sandbox.session.start ", "app.exec"} {
		t.Run(name, func(t *testing.T) {
			ld, lr := oneRecord()
			lr.SetEventName(name)
			lr.Body().SetStr(line)
			putSandbox(lr.Attributes(), "exec")
			got := records(processLogs(t, userRules(), ld)).At(0)
			assertNoSecret(t, recordText(t, got))
			assert.Contains(t, got.Body().Str(), `"curl"`, "the rest of the body stays")
		})
	}
}
