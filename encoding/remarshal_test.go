package sandboxauditencoding

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestMarshalTracesAgainWritesTheSameLines: the kafka exporter retries a
// request by marshaling its spans again. Spans without seq attributes (the
// Python SDK's) get their seqs when marshaled; marshaled again, they get the
// same ones, so what a retry produces again is an exact copy, and the
// session's next span goes on from there.
func TestMarshalTracesAgainWritesTheSameLines(t *testing.T) {
	ext := newExt(t, &Config{}, nil)
	td := sandboxTraces(1, 2)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		spans.At(i).Attributes().Remove("sandbox.event.start_seq")
		spans.At(i).Attributes().Remove("sandbox.event.finish_seq")
	}
	first, err := ext.MarshalTraces(td)
	require.NoError(t, err)
	again, err := ext.MarshalTraces(td)
	require.NoError(t, err)
	assert.Equal(t, string(first), string(again))

	next := sandboxTraces(1, 3)
	nextSpans := next.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	nextSpans.RemoveIf(func(s ptrace.Span) bool { return s.SpanID() != spanID(0, 3) })
	nextSpans.At(0).Attributes().Remove("sandbox.event.start_seq")
	nextSpans.At(0).Attributes().Remove("sandbox.event.finish_seq")
	line, err := ext.MarshalTraces(next)
	require.NoError(t, err)
	assert.Contains(t, string(line), `"seq":5,`)
	assert.Contains(t, string(line), `"seq":6,`)
}
