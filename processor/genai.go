package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// addGenAI gives a sandbox span of op the tool-call attributes that agent
// tracing UIs key on, keeping any value the producer set. It names the
// tool only: arguments and results stay under the payload policy. A span
// its producer calls another kind of operation gets none (otherOperation).
func addGenAI(attrs pcommon.Map, op string) {
	if otherOperation(attrs) {
		return
	}
	putIfAbsent(attrs, semconv.AttrGenAIOperationName, semconv.GenAIExecuteTool)
	putIfAbsent(attrs, semconv.AttrGenAIToolName, semconv.SpanNamePrefix+op)
	putIfAbsent(attrs, semconv.AttrGenAIToolType, semconv.GenAIToolTypeFunction)
	putIfAbsent(attrs, semconv.AttrOpenInferenceSpanKind, semconv.OpenInferenceKindTool)
}

// otherOperation reports whether the producer says the span is not a tool
// call, by gen_ai.operation.name or openinference.span.kind. Adding the
// tool attributes would make it say both, and backends differ in which
// attribute they read: Langfuse and Phoenix would show it as different
// things.
func otherOperation(attrs pcommon.Map) bool {
	if v, ok := attrs.Get(semconv.AttrGenAIOperationName); ok &&
		(v.Type() != pcommon.ValueTypeStr || v.Str() != semconv.GenAIExecuteTool) {
		return true
	}
	v, ok := attrs.Get(semconv.AttrOpenInferenceSpanKind)
	return ok && (v.Type() != pcommon.ValueTypeStr || !strings.EqualFold(v.Str(), semconv.OpenInferenceKindTool))
}

func putIfAbsent(attrs pcommon.Map, key, value string) {
	if _, ok := attrs.Get(key); !ok {
		attrs.PutStr(key, value)
	}
}
