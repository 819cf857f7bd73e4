package sandboxauditprocessor

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// dupSpan is an OTLP/JSON request whose one span names some attributes
// twice, as the wire allows: the first copies are harmless, the last
// copies (the ones the exporter's mapping reads) hold output and a secret.
func dupSpan(t *testing.T, firstOp, lastOp string) ptrace.Traces {
	t.Helper()
	str := func(k, v string) string { return `{"key":"` + k + `","value":{"stringValue":"` + v + `"}}` }
	secret := redacttest.GitHubToken
	attrs := []string{
		str("sandbox.operation", firstOp),
		str("sandbox.session.id", "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"),
		str("sandbox.exec.stdout_bytes", base64.StdEncoding.EncodeToString([]byte("filler"))),
		str("sandbox.exec.stdout", "filler"),
		str("sandbox.error.message", "fine"),
		str("sandbox.exec.stdout_bytes", base64.StdEncoding.EncodeToString([]byte("RAW-OUTPUT "+secret))),
		str("sandbox.exec.stdout", "TEXT-OUTPUT"),
		str("sandbox.error.message", "failed with "+secret),
		str("sandbox.operation", lastOp),
	}
	body := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736",` +
		`"spanId":"00f067aa0ba902b7","name":"sandbox.exec","startTimeUnixNano":"1700000000000000000",` +
		`"endTimeUnixNano":"1700000001000000000","attributes":[` + strings.Join(attrs, ",") + `]}]}]}]}`
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(body))
	require.NoError(t, err)
	require.Equal(t, 9, td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().Len(),
		"the wire format keeps both copies")
	return td
}

// spanText is every attribute of the span's processed copy, as text.
func spanText(td ptrace.Traces) (keys []string, text string) {
	var b strings.Builder
	for k, v := range td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().All() {
		keys = append(keys, k)
		b.WriteString(k + "=" + v.AsString() + "\n")
	}
	return keys, b.String()
}

// TestDuplicateAttributesAreAllProcessed: a span that names an output
// attribute twice reaches the backend with neither copy when output is
// excluded, and the secret in a second error message copy is cut.
func TestDuplicateAttributesAreAllProcessed(t *testing.T) {
	keys, text := spanText(process(t, createDefaultConfig().(*Config), dupSpan(t, "exec", "exec")))
	for _, k := range keys {
		assert.NotContains(t, k, "sandbox.exec.std", "output excluded by default")
	}
	assert.NotContains(t, text, "OUTPUT")
	assert.NotContains(t, text, redacttest.GitHubToken)
}

// TestDuplicateOperationIsReadAsTheExporterReadsIt: with two copies of
// sandbox.operation the processor resolves the policy for the op the
// exporter's mapping writes (the last copy), so the backend gets no more
// output than the audit file.
func TestDuplicateOperationIsReadAsTheExporterReadsIt(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.PayloadPolicyByOp = map[string]auditevent.PolicyOverride{"read": {IncludeExecOutput: auditevent.Ptr(true)}}
	file := lines(t, dupSpan(t, "read", "exec"), auditevent.PolicySet{ByOp: cfg.PayloadPolicyByOp}.Resolve("exec"))
	require.Contains(t, file, `"op":"exec"`)
	require.Contains(t, file, `"stdout":null`)
	_, text := spanText(process(t, cfg, dupSpan(t, "read", "exec")))
	assert.NotContains(t, text, "OUTPUT")
}
