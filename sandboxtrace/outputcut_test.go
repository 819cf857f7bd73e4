package sandboxtrace_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// capturedStdout runs an exec whose stdout is out under a capture bound
// of max bytes and returns the raw bytes the span carries.
func capturedStdout(t *testing.T, out string, max int) []byte {
	t.Helper()
	r := newRecorder(t)
	s := r.session(t, sandboxtrace.WithOutputCapture(max))
	_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"x"}},
		runs(sandboxtrace.ExecResult{Stdout: []byte(out)}, nil))
	require.NoError(t, err)
	raw, err := base64.StdEncoding.DecodeString(attrs(r.only(t))["sandbox.exec.stdout_bytes"].AsString())
	require.NoError(t, err)
	return raw
}

// TestOutputCaptureDropsASplitToken: a token the capture bound cuts in
// two no longer matches its format, so the collector's redaction could
// not cut the half that is kept; the capture drops it whole, and the
// redacted text holds no part of it.
func TestOutputCaptureDropsASplitToken(t *testing.T) {
	red, err := redact.New(redact.DefaultSettings())
	require.NoError(t, err)
	const before = "found "
	for _, tok := range []string{redacttest.GitHubToken, redacttest.SlackToken, redacttest.OpenAIKey, redacttest.JWT, redacttest.VaultToken} {
		for n := 1; n < len(tok); n++ {
			raw := capturedStdout(t, before+tok+" in ~/.config\n", len(before)+n)
			require.Equal(t, before+"…", string(raw), "%s cut after %d bytes", tok[:4], n)
			text := red.Output(raw, 8000, nil)
			assert.NotContains(t, text, tok[:min(n, 4)], "%s cut after %d bytes", tok[:4], n)
		}
	}
}

// TestOutputCaptureKeepsWholeWords: a bound that falls between words, or
// inside a run longer than any token, keeps what it cut to.
func TestOutputCaptureKeepsWholeWords(t *testing.T) {
	assert.Equal(t, "one two…", string(capturedStdout(t, "one two three", 7)))
	assert.Equal(t, "one two …", string(capturedStdout(t, "one two three", 8)))
	long := strings.Repeat("QUJD", 2000) // base64 data, longer than any token
	assert.Equal(t, "x "+long[:6000]+"…", string(capturedStdout(t, "x "+long, 6002)))
}
