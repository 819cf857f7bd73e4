package sandboxtrace_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

func spanNamed(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no span named %q", name)
	return tracetest.SpanStub{}
}

func TestOneTracePerSession(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t, sandboxtrace.WithBackend("unix_local"))
	ctx := context.Background()

	// A caller span of an unrelated trace (e.g. an incoming request).
	foreignCtx, foreign := r.tp.Tracer("caller").Start(ctx, "request")
	defer foreign.End()

	require.NoError(t, s.Do(ctx, "start", nil, ok))
	require.NoError(t, s.Do(foreignCtx, "exec", nil, ok))
	// Nested: an op started from another op's ctx.
	require.NoError(t, s.Do(ctx, "materialize", nil, func(ctx context.Context, _ *sandboxtrace.Op) error {
		return s.Do(ctx, "write", nil, ok)
	}))
	s.End()

	spans := r.exp.GetSpans()
	root := spanNamed(t, spans, "sandbox.session")
	ra := attrs(root)
	assert.NotContains(t, ra, "sandbox.operation", "the collector must skip the root span")
	assert.Equal(t, s.ID().String(), ra["sandbox.session.id"].AsString())
	assert.Equal(t, "unix_local", ra["sandbox.backend"].AsString())
	assert.False(t, root.Parent.IsValid())
	assert.Equal(t, s.TraceID(), root.SpanContext.TraceID())
	assert.NotEqual(t, foreign.SpanContext().TraceID(), s.TraceID())

	for _, span := range r.ops() {
		assert.Equal(t, s.TraceID(), span.SpanContext.TraceID(), span.Name)
	}
	assert.Equal(t, root.SpanContext.SpanID(), spanNamed(t, spans, "sandbox.start").Parent.SpanID())

	exec := spanNamed(t, spans, "sandbox.exec")
	assert.Equal(t, root.SpanContext.SpanID(), exec.Parent.SpanID(), "a foreign span is not the parent")
	require.Len(t, exec.Links, 1, "the foreign caller span is kept as a link")
	assert.Equal(t, foreign.SpanContext().SpanID(), exec.Links[0].SpanContext.SpanID())

	mat := spanNamed(t, spans, "sandbox.materialize")
	assert.Equal(t, mat.SpanContext.SpanID(), spanNamed(t, spans, "sandbox.write").Parent.SpanID())
	assert.Empty(t, mat.Links)
}

func TestSessionUnderCallerSpan(t *testing.T) {
	r := newRecorder(t)
	parentCtx, parent := r.tp.Tracer("caller").Start(context.Background(), "agent.run")
	s, err := sandboxtrace.NewSession(parentCtx, r.tp)
	require.NoError(t, err)

	// Ops from the caller's ctx stay in the caller's (= the session's) trace
	// and nest under the caller's span.
	require.NoError(t, s.Do(parentCtx, "exec", nil, ok))
	// Ops from a bare ctx go under the session's root span.
	require.NoError(t, s.Do(context.Background(), "read", nil, ok))
	// Context gives callers a ctx inside the session's trace.
	_, own := r.tp.Tracer("caller").Start(s.Context(context.Background()), "own")
	own.End()
	s.End()
	parent.End()

	spans := r.exp.GetSpans()
	root := spanNamed(t, spans, "sandbox.session")
	assert.Equal(t, parent.SpanContext().SpanID(), root.Parent.SpanID())
	assert.Equal(t, parent.SpanContext().TraceID(), s.TraceID())
	assert.Equal(t, parent.SpanContext().SpanID(), spanNamed(t, spans, "sandbox.exec").Parent.SpanID())
	assert.Equal(t, root.SpanContext.SpanID(), spanNamed(t, spans, "sandbox.read").Parent.SpanID())
	assert.Equal(t, root.SpanContext.SpanID(), spanNamed(t, spans, "own").Parent.SpanID())
	for _, span := range spans {
		assert.Equal(t, s.TraceID(), span.SpanContext.TraceID(), span.Name)
	}
}

func TestEndIsIdempotentAndOpsAfterEndStayInTrace(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	s.End()
	s.End()
	require.NoError(t, s.Do(context.Background(), "stop", nil, ok))
	roots := 0
	for _, span := range r.exp.GetSpans() {
		if span.Name == "sandbox.session" {
			roots++
		}
		assert.Equal(t, s.TraceID(), span.SpanContext.TraceID())
	}
	assert.Equal(t, 1, roots)
}
