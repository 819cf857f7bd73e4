package sandboxauditprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
