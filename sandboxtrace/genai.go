package sandboxtrace

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// WithGenAIAttributes sets whether operation spans carry the attributes
// that agent tracing UIs key on to show a tool call: gen_ai.operation.name
// execute_tool, gen_ai.tool.name sandbox.<op>, gen_ai.tool.type function,
// and openinference.span.kind TOOL. On by default: without them Langfuse
// and Phoenix show sandbox operations as unknown spans, and they name the
// tool only, never its arguments or results.
func WithGenAIAttributes(on bool) Option {
	return func(c *config) { c.noGenAI = !on }
}

// genAIAttributes appends the tool-call attributes of op to attrs.
func genAIAttributes(attrs []attribute.KeyValue, op string) []attribute.KeyValue {
	return append(attrs,
		attribute.String(semconv.AttrGenAIOperationName, semconv.GenAIExecuteTool),
		attribute.String(semconv.AttrGenAIToolName, semconv.SpanNamePrefix+op),
		attribute.String(semconv.AttrGenAIToolType, semconv.GenAIToolTypeFunction),
		attribute.String(semconv.AttrOpenInferenceSpanKind, semconv.OpenInferenceKindTool),
	)
}
