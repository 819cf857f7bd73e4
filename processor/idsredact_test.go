package sandboxauditprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// TestSecretsAreCutFromErrorTypeAndEventIds: the exporter cuts secrets from
// error_type and from ids that are not a tracer's, so a tracing backend
// does not get them from the attributes that carry them either (the
// receiver's spans put the event's ids there when they are not the span's
// own). An id as tracers make it stays whole.
func TestSecretsAreCutFromErrorTypeAndEventIds(t *testing.T) {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetName("sandbox.exec")
	attrs := span.Attributes()
	putSandbox(attrs, "exec")
	attrs.PutStr(semconv.AttrErrorType, "RuntimeError: token "+redacttest.GitHubToken)
	attrs.PutStr(semconv.AttrEventSpanID, redacttest.GitHubToken)
	attrs.PutStr(semconv.AttrEventParentSpanID, "postgres://app:hunter2hunter2@db/prod")
	attrs.PutStr(semconv.AttrEventTraceID, "sandbox_op_0af7651916cd43dd8448eb211c80319c")
	out := process(t, &Config{}, td).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().AsRaw()
	assert.Equal(t, "RuntimeError: token [REDACTED:github_token]", out[semconv.AttrErrorType])
	assert.Equal(t, "[REDACTED:github_token]", out[semconv.AttrEventSpanID])
	assert.Equal(t, "postgres://app:[REDACTED:url_password]@db/prod", out[semconv.AttrEventParentSpanID])
	assert.Equal(t, "sandbox_op_0af7651916cd43dd8448eb211c80319c", out[semconv.AttrEventTraceID])
}

// TestSecretsAreCutFromMalformedScalarAttributes: a producer may put any
// text in a sandbox attribute that should hold an id, a time, a code, a
// number or a flag (an error's text as its code), or a URL with its
// password as the backend. The exporter refuses or drops such a value, but
// the tracing backend showed it in clear. Well-formed values stay.
func TestSecretsAreCutFromMalformedScalarAttributes(t *testing.T) {
	leak := "HTTPError: GET https://bot:hunter2hunter2@git.example.com failed, token " + redacttest.GitHubToken
	keys := []string{
		semconv.AttrBackend, semconv.AttrStartSeq, semconv.AttrFinishSeq, semconv.AttrStartID, semconv.AttrFinishID,
		semconv.AttrOK, semconv.AttrDurationMS, semconv.AttrErrorCode, semconv.AttrErrorRetryable,
		semconv.AttrEventVersion, semconv.AttrStartTS, semconv.AttrFinishTS, semconv.AttrIncomplete,
		semconv.AttrStartMissing, semconv.AttrEventPhase, semconv.AttrEventSeq, semconv.AttrProcessExitCode,
		semconv.AttrServerPort,
	}
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	attrs := span.Attributes()
	putSandbox(attrs, "exec")
	for _, k := range keys {
		attrs.PutStr(k, leak)
	}
	attrs.PutEmptySlice(semconv.AttrOK).AppendEmpty().SetStr(leak)
	out := process(t, &Config{}, td).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	for _, k := range keys {
		v, ok := out.Get(k)
		require.True(t, ok, k)
		assert.NotContains(t, v.AsString(), "hunter2hunter2", k)
		assert.NotContains(t, v.AsString(), redacttest.GitHubToken, k)
		assert.Contains(t, v.AsString(), "[REDACTED:github_token]", k)
	}

	good := ptrace.NewTraces()
	gattrs := good.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
	putSandbox(gattrs, "exec")
	gattrs.PutStr(semconv.AttrBackend, "docker")
	gattrs.PutStr(semconv.AttrStartID, "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e")
	gattrs.PutStr(semconv.AttrStartTS, "2026-03-14T15:09:26.535897Z")
	gattrs.PutStr(semconv.AttrErrorCode, "exec_nonzero")
	want := gattrs.AsRaw()
	assert.Equal(t, want, process(t, &Config{}, good).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().AsRaw())
}

// TestSecretIsCutFromExceptionType: an exception event's type repeats
// error.type, which is cut, so it is cut too; a class name stays.
func TestSecretIsCutFromExceptionType(t *testing.T) {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	putSandbox(span.Attributes(), "exec")
	for _, typ := range []string{"RuntimeError: token " + redacttest.GitHubToken, "ExecError"} {
		ev := span.Events().AppendEmpty()
		ev.SetName("exception")
		ev.Attributes().PutStr("exception.type", typ)
	}
	events := process(t, &Config{}, td).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Events()
	cut, _ := events.At(0).Attributes().Get("exception.type")
	assert.Equal(t, "RuntimeError: token [REDACTED:github_token]", cut.Str())
	kept, _ := events.At(1).Attributes().Get("exception.type")
	assert.Equal(t, "ExecError", kept.Str())
}
