package sandboxtrace_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// recorder is a TracerProvider whose ended spans land in memory.
type recorder struct {
	tp  *sdktrace.TracerProvider
	exp *tracetest.InMemoryExporter
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.Background())) })
	return &recorder{tp: tp, exp: exp}
}

func (r *recorder) session(t *testing.T, opts ...sandboxtrace.Option) *sandboxtrace.Session {
	t.Helper()
	s, err := sandboxtrace.NewSession(context.Background(), r.tp, opts...)
	require.NoError(t, err)
	return s
}

// ops returns the ended operation spans (those with sandbox.operation).
func (r *recorder) ops() tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range r.exp.GetSpans() {
		if _, ok := attrs(s)[semconv.AttrOperation]; ok {
			out = append(out, s)
		}
	}
	return out
}

// only returns the single ended operation span.
func (r *recorder) only(t *testing.T) tracetest.SpanStub {
	t.Helper()
	ops := r.ops()
	require.Len(t, ops, 1)
	return ops[0]
}

func attrs(s tracetest.SpanStub) map[string]attribute.Value {
	m := make(map[string]attribute.Value, len(s.Attributes))
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

func ok(context.Context, *sandboxtrace.Op) error { return nil }
