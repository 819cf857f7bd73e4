package sandboxtrace

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The status is read from otlptracehttp's and otlploghttp's own message,
// wherever it sits in the chain; a reply body that quotes one is no
// refusal.
func TestRefusedWhole(t *testing.T) {
	for msg, want := range map[error]bool{
		errors.New("failed to send to http://127.0.0.1:4318/v1/traces: 400 Bad Request (body: x)"):                                      true,
		errors.New("failed to send logs to http://127.0.0.1:4318/v1/logs: 413 Request Entity Too Large (body: x)"):                      true,
		errors.New("failed to send to http://127.0.0.1:4318/v1/traces: 401 Unauthorized (body: x)"):                                     false,
		errors.New("retry-able request failure: body: failed to send to http://x: 400 Bad Request"):                                     false,
		errors.New("log endpoint: 400 Bad Request"):                                                                                     false,
		&refusedError{errors.New("log endpoint: 413 Request Entity Too Large")}:                                                         true,
		fmt.Errorf("traces export: %w", errors.Join(nil, errors.New("failed to send to http://h/v1/traces: 400 Bad Request (body: )"))): true,
	} {
		assert.Equal(t, want, refusedWhole(msg), "%v", msg)
	}
}
