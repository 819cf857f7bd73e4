package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestURLPortReferenceIsNoPassword: a port written as a reference
// (http://localhost:${PORT}/users/@me in docs and scripts) is no password
// holding a '/', though an '@' follows in the path.
func TestURLPortReferenceIsNoPassword(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, s := range []string{
		"curl http://localhost:${PORT}/users/@me",
		"curl http://localhost:$PORT/users/@me",
	} {
		got, _ := r.String(s, nil)
		assert.Equal(t, s, got)
	}
	got, _ := r.String("postgres://app:"+"Xk9/q2Lm@db/prod", nil)
	assert.Equal(t, "postgres://app:[REDACTED:url_password]@db/prod", got)
}
