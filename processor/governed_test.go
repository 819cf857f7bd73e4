package sandboxauditprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestPayloadWithoutSessionIsGoverned: a span that carries exec output or
// operation data is under the policy whether or not it names a session or
// an operation. The exporter writes no line for it, so its exec output is
// removed even where the policy keeps output, and its data is redacted.
func TestPayloadWithoutSessionIsGoverned(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.PayloadPolicy.IncludeExecOutput = auditevent.Ptr(true)
	const session = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	cases := map[string]map[string]any{
		"no operation, no session": {},
		"operation only":           {"sandbox.operation": "exec"},
		"session only":             {"sandbox.session.id": session},
		"session not a UUID":       {"sandbox.operation": "exec", "sandbox.session.id": "not-a-uuid"},
	}
	outputs := map[string]any{
		"sandbox.exec.stdout_bytes": "c2VjcmV0",
		"sandbox.exec.stderr_bytes": []byte("secret"),
		"sandbox.exec.stdout":       "secret",
		"sandbox.exec.stderr":       "secret",
	}
	for name, ids := range cases {
		for key, val := range outputs {
			attrs := map[string]any{key: val, "http.request.method": "GET"}
			for k, v := range ids {
				attrs[k] = v
			}
			got := run(t, cfg, attrs)
			assert.NotContains(t, got, key, name)
			assert.Equal(t, "GET", got["http.request.method"], name)
		}
	}
	got := run(t, cfg, map[string]any{
		"sandbox.start_data":    `{"token":"ghp_0123456789abcdefghijABCDEFGHIJ012345"}`,
		"sandbox.error.message": "auth ghp_0123456789abcdefghijABCDEFGHIJ012345 refused",
	})
	assert.NotContains(t, got["sandbox.start_data"], "ghp_0123456789", "data is redacted")
	assert.NotContains(t, got["sandbox.error.message"], "ghp_0123456789", "the error message is redacted")
	assert.NotContains(t, got, "gen_ai.tool.name", "no operation to name")
}
