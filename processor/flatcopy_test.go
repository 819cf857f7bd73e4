package sandboxauditprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestFlatCopyOfDataIsRedacted: sandboxtrace copies the data's
// server.address to an attribute of its own; the exporter cuts the
// credential from the data, so the backend must not get it from the copy.
func TestFlatCopyOfDataIsRedacted(t *testing.T) {
	const addr = "https://alice:hunter2pw@db.example.com"
	const cut = "https://alice:[REDACTED:url_password]@db.example.com"
	got := run(t, createDefaultConfig().(*Config), execSpan(map[string]any{
		"sandbox.finish_data": `{"server.address":"` + addr + `"}`,
		"server.address":      addr,
	}))
	assert.Equal(t, `{"server.address":"`+cut+`"}`, got["sandbox.finish_data"])
	assert.Equal(t, cut, got["server.address"])
}

// TestFlatCopyNamedTwiceIsRedacted: every copy is cut, since a backend may
// show any of them.
func TestFlatCopyNamedTwiceIsRedacted(t *testing.T) {
	got := runDup(t, "server.address", "https://a:first1pw@h", "https://b:second2pw@h")
	assert.Equal(t, []string{"https://a:[REDACTED:url_password]@h", "https://b:[REDACTED:url_password]@h"}, got)
}

// TestFlatCopyOfANonSandboxSpanIsUntouched: an ordinary client span's
// server.address is not audit data.
func TestFlatCopyOfANonSandboxSpanIsUntouched(t *testing.T) {
	attrs := map[string]any{"server.address": "https://alice:hunter2pw@db.example.com"}
	assert.Equal(t, attrs, run(t, createDefaultConfig().(*Config), attrs))
}

// runDup passes a sandbox span naming key once for each of values, as the
// wire allows, and returns the values of key that reach the next consumer.
func runDup(t *testing.T, key string, values ...string) []string {
	t.Helper()
	str := func(k, v string) string { return `{"key":"` + k + `","value":{"stringValue":"` + v + `"}},` }
	attrs := str("sandbox.operation", "exec") + str("sandbox.session.id", "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")
	for _, v := range values {
		attrs += str(key, v)
	}
	body := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736",` +
		`"spanId":"00f067aa0ba902b7","name":"sandbox.exec","attributes":[` + attrs[:len(attrs)-1] + `]}]}]}]}`
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(body))
	require.NoError(t, err)
	var got []string
	for k, v := range process(t, createDefaultConfig().(*Config), td).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().All() {
		if k == key {
			got = append(got, v.AsString())
		}
	}
	return got
}
