package sandboxauditprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

func TestGenAIAttributesOnSandboxSpans(t *testing.T) {
	got := run(t, createDefaultConfig().(*Config), execSpan(nil))
	assert.Equal(t, "execute_tool", got["gen_ai.operation.name"])
	assert.Equal(t, "sandbox.exec", got["gen_ai.tool.name"])
	assert.Equal(t, "function", got["gen_ai.tool.type"])
	assert.Equal(t, "TOOL", got["openinference.span.kind"])
	assert.NotContains(t, got, "gen_ai.tool.call.arguments", "arguments stay under the payload policy")
	assert.NotContains(t, got, "gen_ai.tool.call.result")
}

func TestGenAIAttributesKeepTheProducersValues(t *testing.T) {
	got := run(t, createDefaultConfig().(*Config), execSpan(map[string]any{"gen_ai.tool.name": "shell", "openinference.span.kind": "TOOL"}))
	assert.Equal(t, "shell", got["gen_ai.tool.name"])
	assert.Equal(t, "TOOL", got["openinference.span.kind"])
	assert.Equal(t, "execute_tool", got["gen_ai.operation.name"], "the missing ones are added")
	assert.Equal(t, "function", got["gen_ai.tool.type"])
}

// TestGenAIAttributesNotOnASpanSaidToBeAnotherOperation: a span whose
// producer says it is another kind of operation, by gen_ai.operation.name
// or by openinference.span.kind, gets no tool attribute: it would then say
// it is both, and Langfuse and Phoenix, each reading its own attribute,
// would show it as different things.
func TestGenAIAttributesNotOnASpanSaidToBeAnotherOperation(t *testing.T) {
	for name, extra := range map[string]map[string]any{
		"chat":            {"gen_ai.operation.name": "chat"},
		"invoke_agent":    {"gen_ai.operation.name": "invoke_agent", "gen_ai.tool.type": "extension"},
		"not text":        {"gen_ai.operation.name": int64(3)},
		"LLM":             {"openinference.span.kind": "LLM"},
		"CHAIN":           {"openinference.span.kind": "CHAIN"},
		"chat and TOOL":   {"gen_ai.operation.name": "chat", "openinference.span.kind": "TOOL"},
		"tool but AGENT":  {"gen_ai.operation.name": "execute_tool", "openinference.span.kind": "AGENT"},
		"empty operation": {"gen_ai.operation.name": ""},
	} {
		t.Run(name, func(t *testing.T) {
			got := run(t, createDefaultConfig().(*Config), execSpan(extra))
			for _, k := range []string{"gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.type", "openinference.span.kind"} {
				want, set := extra[k]
				if set {
					assert.Equal(t, want, got[k], "the producer's value stays")
					continue
				}
				assert.NotContains(t, got, k)
			}
		})
	}
}

// TestGenAIAttributesCompleteAToolCall: a span its producer already calls
// a tool call, in either vocabulary, gets the rest. OpenInference's kind
// is taken in any case, as a producer may write it.
func TestGenAIAttributesCompleteAToolCall(t *testing.T) {
	for name, extra := range map[string]map[string]any{
		"execute_tool": {"gen_ai.operation.name": "execute_tool"},
		"TOOL":         {"openinference.span.kind": "TOOL"},
		"tool":         {"openinference.span.kind": "tool"},
	} {
		t.Run(name, func(t *testing.T) {
			got := run(t, createDefaultConfig().(*Config), execSpan(extra))
			assert.Equal(t, "execute_tool", got["gen_ai.operation.name"])
			assert.Equal(t, "sandbox.exec", got["gen_ai.tool.name"])
			assert.Equal(t, "function", got["gen_ai.tool.type"])
			assert.Contains(t, []any{"TOOL", "tool"}, got["openinference.span.kind"])
		})
	}
}

func TestGenAIAttributesOff(t *testing.T) {
	cfg := loadConfig(t, "no_genai")
	require.NoError(t, confmap.Validate(cfg))
	got := run(t, cfg, execSpan(nil))
	for _, k := range []string{"gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.type", "openinference.span.kind"} {
		assert.NotContains(t, got, k)
	}
}

func TestGenAIAttributesOnlyOnSandboxSpans(t *testing.T) {
	got := run(t, createDefaultConfig().(*Config), map[string]any{"http.route": "/v1/chat"})
	assert.Equal(t, map[string]any{"http.route": "/v1/chat"}, got)
}

func TestGenAIAttributesDefaultFromAnEmptyConfig(t *testing.T) {
	assert.True(t, loadConfig(t, "").GenAIAttributes, "sandboxaudit: with no keys keeps the default")
}

// TestGenAIAttributesOnlyForSandboxOperations: a span whose
// sandbox.operation is not a sandbox operation (the exporter refuses it) is
// not labelled as a sandbox tool call, nor is its value copied into
// gen_ai.tool.name.
func TestGenAIAttributesOnlyForSandboxOperations(t *testing.T) {
	for name, op := range map[string]any{"unknown op": "curl -H 'Authorization: x'", "int": int64(7), "wrong case": "EXEC"} {
		t.Run(name, func(t *testing.T) {
			got := run(t, createDefaultConfig().(*Config), execSpan(map[string]any{"sandbox.operation": op}))
			for _, k := range []string{"gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.type", "openinference.span.kind"} {
				assert.NotContains(t, got, k)
			}
		})
	}
}
