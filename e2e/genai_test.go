package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pythonToolSpan is an OTLP/JSON export of one span as the Python SDK's
// custom_span records a sandbox exec: sandbox.* attributes and no gen_ai.*.
const pythonToolSpan = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"agent"}}]},
"scopeSpans":[{"scope":{"name":"openai.agents"},"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331",
"name":"sandbox.exec","kind":1,"startTimeUnixNano":"1773500966535897000","endTimeUnixNano":"1773500966786022000",
"attributes":[{"key":"sandbox.operation","value":{"stringValue":"exec"}},
{"key":"sandbox.session.id","value":{"stringValue":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"}},
{"key":"sandbox.start_data","value":{"stringValue":"{\"command\":[\"ls\"]}"}}]}]}]}]}`

// TestToolAttributesReachATracingBackend: spans from sandboxtrace carry the
// tool-call attributes agent tracing UIs key on, and the processor adds
// them to the Python SDK's spans, which lack them.
func TestToolAttributesReachATracingBackend(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	otlpAddr := freeAddr(t)
	col := startCollector(t, "collector", dir, debugBackendYAML(otlpAddr), otlpAddr)
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post("http://"+otlpAddr+"/v1/traces", "application/json", strings.NewReader(pythonToolSpan))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	runExample(t, otlpAddr, "7f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")
	col.stop(t)

	log := string(mustRead(t, col.log))
	for _, session := range []string{"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b", "7f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"} {
		require.Contains(t, log, session)
	}
	spans := strings.Split(log, "Span #")
	var tools int
	for _, s := range spans[1:] {
		if !strings.Contains(s, "sandbox.operation:") {
			continue
		}
		tools++
		assert.Contains(t, s, "gen_ai.operation.name: Str(execute_tool)")
		assert.Contains(t, s, "gen_ai.tool.type: Str(function)")
		assert.Contains(t, s, "openinference.span.kind: Str(TOOL)")
		assert.Regexp(t, `gen_ai\.tool\.name: Str\(sandbox\.[a-z_]+\)`, s)
	}
	assert.GreaterOrEqual(t, tools, 2, "the Python span and the example's operations")
}
