package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCodeAndProseStay: text an agent's sandbox prints every day (generated
// API docs) that names a secret without holding
// one stays whole.
func TestCodeAndProseStay(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, s := range []string{
		// a quoted name in prose, not a member of JSON or YAML
		"// PageToken sets the optional parameter \"pageToken\": A page token received\n",
		`the "password": field must be at least 8 characters`,
	} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}

// TestSecretsNextToCodeStillCut: values that look like the code above but
// hold a secret are still cut.
func TestSecretsNextToCodeStillCut(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ in, want string }{
		{"\"password\": hunter2\n", "\"password\": [REDACTED:password]\n"},
		{`{"token": abc123, "n": 1}`, `{"token": [REDACTED:token], "n": 1}`},
		{"  \"api_key\": \"sk-live-abc\"  and more", "  \"api_key\": \"[REDACTED:api_key]\"  and more"},
	} {
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, tc.want, got)
	}
}
