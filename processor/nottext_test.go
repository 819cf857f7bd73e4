package sandboxauditprocessor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// notText puts a secret in each attribute an event reads as text, as a
// list, a map or bytes: the exporter refuses such a span, and the secret
// cannot be cut in place.
func notText() map[string]any {
	secret := redacttest.GitHubToken
	return execSpan(map[string]any{
		"sandbox.start_data":    map[string]any{"env": map[string]any{"GITHUB_TOKEN": secret}},
		"sandbox.finish_data":   []byte(`{"note":"` + secret + `"}`),
		"sandbox.error.message": []any{"failed with " + secret},
		"sandbox.exec.stdout":   []byte("out " + secret),
		"sandbox.exec.stderr":   map[string]any{"text": secret},
		"sandbox.event.seq_of":  7, // not an event attribute: untouched
	})
}

// TestEventAttributesThatAreNotTextDoNotPassInClear: with redaction on, a
// list, map or bytes value where an event needs text is removed, so its
// secret does not reach the backend.
func TestEventAttributesThatAreNotTextDoNotPassInClear(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.PayloadPolicy.IncludeExecOutput = auditevent.Ptr(true)
	got := run(t, cfg, notText())
	assert.NotContains(t, fmt.Sprint(got), redacttest.GitHubToken)
	for _, k := range []string{"sandbox.start_data", "sandbox.finish_data", "sandbox.error.message", "sandbox.exec.stdout", "sandbox.exec.stderr"} {
		assert.NotContains(t, got, k)
	}
	assert.Equal(t, int64(7), got["sandbox.event.seq_of"])

	// Redaction off: left as the producer sent them.
	cfg.PayloadPolicy.Redact.Enabled = auditevent.Ptr(false)
	got = run(t, cfg, notText())
	assert.Contains(t, got, "sandbox.start_data")
	assert.Contains(t, got, "sandbox.exec.stdout")
}
