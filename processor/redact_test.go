package sandboxauditprocessor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// configWithUserRules keeps exec output and adds the sample user pattern
// and key.
func configWithUserRules() *Config {
	return &Config{PayloadPolicy: auditevent.PolicyOverride{
		IncludeExecOutput: auditevent.Ptr(true),
		Redact:            userRedact(),
	}}
}

// userRedact adds redacttest's sample user pattern and key to the
// built-in rules.
func userRedact() auditevent.RedactOverride {
	return auditevent.RedactOverride{
		Patterns: []string{redacttest.UserPattern},
		Keys:     []string{redacttest.UserKey},
	}
}

func putSandbox(attrs pcommon.Map, op string) {
	attrs.PutStr("sandbox.operation", op)
	attrs.PutStr("sandbox.session.id", "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")
}

func everyKindText() string { return redacttest.Text() }

// secretSpan carries a secret of every kind in each attribute an event is
// made of, and in the status message.
func secretSpan(t *testing.T, op string) ptrace.Traces {
	t.Helper()
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetName("sandbox." + op)
	span.Status().SetCode(ptrace.StatusCodeError)
	span.Status().SetMessage(redacttest.Text())
	attrs := span.Attributes()
	putSandbox(attrs, op)
	data, err := json.Marshal(map[string]any{"command": redacttest.Argv(), "env": redacttest.Env(), "cwd": "/work"})
	require.NoError(t, err)
	attrs.PutStr("sandbox.start_data", string(data))
	attrs.PutStr("sandbox.finish_data", `{"note":"`+strings.ReplaceAll(redacttest.Text(), "\n", `\n`)+`"}`)
	attrs.PutStr("sandbox.error.message", redacttest.Text())
	attrs.PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw([]byte(redacttest.Text()))
	attrs.PutStr("sandbox.exec.stderr", redacttest.Text())
	return td
}

// TestSecretsAreCutFromEverySpanField: no secret of any kind survives in
// any attribute or the status message, each field holds markers, the data
// attributes stay canonical JSON objects, and raw output is decoded.
func TestSecretsAreCutFromEverySpanField(t *testing.T) {
	td := process(t, configWithUserRules(), secretSpan(t, "exec"))
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	attrs := span.Attributes().AsRaw()
	assert.NotContains(t, attrs, "sandbox.exec.stdout_bytes")
	fields := map[string]string{"status": span.Status().Message()}
	for _, k := range []string{"sandbox.start_data", "sandbox.finish_data", "sandbox.error.message", "sandbox.exec.stdout", "sandbox.exec.stderr"} {
		require.IsType(t, "", attrs[k], k)
		fields[k] = attrs[k].(string)
	}
	for name, v := range fields {
		for _, secret := range redacttest.Secrets() {
			assert.NotContains(t, v, secret, name)
		}
		assert.Contains(t, v, "[REDACTED:", name)
	}
	for _, k := range []string{"sandbox.start_data", "sandbox.finish_data"} {
		d, err := auditevent.ParseData([]byte(fields[k]))
		require.NoError(t, err, k)
		assert.Equal(t, d.String(), fields[k], "%s is canonical", k)
	}
	assert.Contains(t, fields["sandbox.start_data"], `"/var/run/secrets/token"`, "--token-file's path stays")
	assert.Contains(t, fields["sandbox.start_data"], `"HOME":"/home/agent"`)
}

// TestRedactionOffPerOp: an op whose level sets enabled: false keeps its
// values, and the other ops are still redacted.
func TestRedactionOffPerOp(t *testing.T) {
	cfg := loadConfig(t, "redact_rules")
	read := process(t, cfg, secretSpan(t, "read")).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	v, _ := read.Attributes().Get("sandbox.error.message")
	assert.Equal(t, redacttest.Text(), v.Str())
	exec := process(t, cfg, secretSpan(t, "exec")).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	v, _ = exec.Attributes().Get("sandbox.error.message")
	assert.NotContains(t, v.Str(), redacttest.CustomMatch)
	assert.NotContains(t, v.Str(), redacttest.CustomKeyVal)
}

func TestBadPatternFailsNamingKeyAndIndex(t *testing.T) {
	err := confmap.Validate(loadConfig(t, "bad_pattern"))
	require.ErrorContains(t, err, "payload_policy_by_op::exec::redact::patterns[1]: not an RE2 expression")
}

// TestSecretsAreCutFromExceptionEvents: an OTel SDK that records an error
// on a span puts its message in an exception event as well as in the status
// message; a tracing backend gets neither in clear.
func TestSecretsAreCutFromExceptionEvents(t *testing.T) {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	putSandbox(span.Attributes(), "exec")
	span.Status().SetCode(ptrace.StatusCodeError)
	span.Status().SetMessage("ExecError: " + redacttest.Text())
	ev := span.Events().AppendEmpty()
	ev.SetName("exception")
	ev.Attributes().PutStr("exception.type", "ExecError")
	ev.Attributes().PutStr("exception.message", redacttest.Text())
	ev.Attributes().PutStr("exception.stacktrace", "Traceback (most recent call last):\n  File \"agent.py\", line 3\nExecError: "+redacttest.Text())

	out := process(t, configWithUserRules(), td).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	attrs := out.Events().At(0).Attributes()
	for _, k := range []string{"exception.message", "exception.stacktrace"} {
		v, ok := attrs.Get(k)
		require.True(t, ok, k)
		for _, secret := range redacttest.Secrets() {
			assert.NotContains(t, v.Str(), secret, k)
		}
		assert.Contains(t, v.Str(), "[REDACTED:", k)
	}
	typ, _ := attrs.Get("exception.type")
	assert.Equal(t, "ExecError", typ.Str())
}

// TestEveryCopyOfAnExceptionMessageIsCut: OTLP can name an event attribute
// twice; neither copy of the exception message reaches the backend in
// clear, and one that is not text is removed.
func TestEveryCopyOfAnExceptionMessageIsCut(t *testing.T) {
	secret := redacttest.GitHubToken
	body := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736",` +
		`"spanId":"00f067aa0ba902b7","name":"sandbox.exec","startTimeUnixNano":"1700000000000000000",` +
		`"endTimeUnixNano":"1700000001000000000","attributes":[` +
		`{"key":"sandbox.operation","value":{"stringValue":"exec"}},` +
		`{"key":"sandbox.session.id","value":{"stringValue":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"}}],` +
		`"events":[{"name":"exception","timeUnixNano":"1700000000500000000","attributes":[` +
		`{"key":"exception.message","value":{"stringValue":"first ` + secret + `"}},` +
		`{"key":"exception.message","value":{"stringValue":"second ` + secret + `"}},` +
		`{"key":"exception.stacktrace","value":{"arrayValue":{"values":[{"stringValue":"` + secret + `"}]}}}]}]}]}]}]}`
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(body))
	require.NoError(t, err)
	out := process(t, createDefaultConfig().(*Config), td).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	attrs := out.Events().At(0).Attributes()
	n := 0
	for k, v := range attrs.All() {
		assert.NotContains(t, v.AsString(), secret, k)
		if k == "exception.message" {
			n++
			assert.Contains(t, v.Str(), "[REDACTED:github_token]")
		}
	}
	assert.Equal(t, 2, n, "both copies stay, redacted")
	_, ok := attrs.Get("exception.stacktrace")
	assert.False(t, ok, "a list is removed")
}
