package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// addGenAI gives a sandbox span of op the tool-call attributes that agent
// tracing UIs key on, keeping any value the producer set. It names the
// tool only: arguments and results stay under the payload policy.
func addGenAI(attrs pcommon.Map, op string) {
	putIfAbsent(attrs, semconv.AttrGenAIOperationName, semconv.GenAIExecuteTool)
	putIfAbsent(attrs, semconv.AttrGenAIToolName, semconv.SpanNamePrefix+op)
	putIfAbsent(attrs, semconv.AttrGenAIToolType, semconv.GenAIToolTypeFunction)
	putIfAbsent(attrs, semconv.AttrOpenInferenceSpanKind, semconv.OpenInferenceKindTool)
}

func putIfAbsent(attrs pcommon.Map, key, value string) {
	if _, ok := attrs.Get(key); !ok {
		attrs.PutStr(key, value)
	}
}
