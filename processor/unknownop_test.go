package sandboxauditprocessor

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestUnknownOpKeepsNoOutput: the exporter refuses a span whose op is not
// a version 1 operation, so its output reaches no audit line; it reaches
// the backend neither, even where the policy's default keeps output and
// only the per-op level for the real op would remove it.
func TestUnknownOpKeepsNoOutput(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.PayloadPolicy.IncludeExecOutput = auditevent.Ptr(true)
	cfg.PayloadPolicyByOp = map[string]auditevent.PolicyOverride{"exec": {IncludeExecOutput: auditevent.Ptr(false)}}
	for _, op := range []string{"EXEC", "exec ", "frobnicate"} {
		attrs := execSpan(map[string]any{"sandbox.exec.stdout_bytes": []byte("out"), "sandbox.exec.stderr": "err"})
		attrs["sandbox.operation"] = op
		got := run(t, cfg, attrs)
		for _, k := range []string{"sandbox.exec.stdout_bytes", "sandbox.exec.stdout", "sandbox.exec.stderr"} {
			assert.NotContains(t, got, k, op)
		}
	}
	got := run(t, cfg, execSpan(map[string]any{"sandbox.operation": "read", "sandbox.exec.stdout_bytes": []byte("out")}))
	assert.Equal(t, "out", got["sandbox.exec.stdout"], "a version 1 op keeps the default")
}

// TestBytesOpKeepsNoOutput: an op sent as bytes reads, as text, as its
// base64 form; bytes whose form is "read" are still not a version 1 op to
// the exporter, which refuses the span, so the backend gets no output.
func TestBytesOpKeepsNoOutput(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.PayloadPolicy.IncludeExecOutput = auditevent.Ptr(true)
	op, err := base64.StdEncoding.DecodeString("read")
	require.NoError(t, err)
	got := run(t, cfg, execSpan(map[string]any{"sandbox.operation": op, "sandbox.exec.stdout_bytes": []byte("out")}))
	assert.NotContains(t, got, "sandbox.exec.stdout")
	assert.NotContains(t, got, "sandbox.exec.stdout_bytes")
}
