package sandboxauditprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
