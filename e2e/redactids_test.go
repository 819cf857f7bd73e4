package e2e

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// TestSecretsInIdsAndErrorTypeNeverReachTheTrail: the receiver takes any
// string as span_id, parent_span_id, trace_id, error_type and data member
// names. A careless
// client's credential there (an exception's text as its type, a URL with
// its password as a parent id) reached the audit file and, through the
// paired span's attributes, the tracing backend in clear. Both lines of the
// span carry the same markers, so the file verifies.
func TestSecretsInIdsAndErrorTypeNeverReachTheTrail(t *testing.T) {
	requireE2E(t)
	col := startRedactCollector(t)
	auditPath := col.auditPath

	const session = "5e1c2a8e-0000-4000-8000-00000000a003"
	parent := "https://bot:hunter2hunter2@git.example.com/run"
	for seq, phase := range []string{"start", "finish"} {
		ev := map[string]any{
			"version": 1, "event_id": fmt.Sprintf("5e1c2a8e-0000-4000-8000-0000000c000%d", seq+1),
			"ts": fmt.Sprintf("2026-03-14T15:09:2%d.535897Z", seq+6), "session_id": session, "seq": seq + 1,
			"op": "exec", "phase": phase, "span_id": redacttest.GitHubToken, "parent_span_id": parent,
			"trace_id": redacttest.AWSKeyID,
			"data":     map[string]any{"command": []string{"ls"}, "headers": map[string]any{redacttest.SlackToken: true}},
		}
		if phase == "finish" {
			for k, v := range map[string]any{
				"ok": false, "duration_ms": 1000.0, "error_code": nil, "error_message": "failed",
				"error_type": "RuntimeError: token " + redacttest.GitHubToken, "error_retryable": nil,
				"stdout": nil, "stderr": nil,
			} {
				ev[k] = v
			}
		}
		b, err := json.Marshal(ev)
		require.NoError(t, err)
		postEvent(t, "http://"+col.sandboxAddr+"/v1/sandbox/events", string(b))
	}
	waitLines(t, auditPath, 2)
	waitLogCount(t, col.log, "sandbox.error.message", 1)
	col.stop(t)

	audit, logText := col.holdsNone(t, []string{redacttest.GitHubToken, redacttest.AWSKeyID, "hunter2hunter2", redacttest.SlackToken})
	assert.Contains(t, audit, `"error_type":"RuntimeError: token [REDACTED:github_token]"`)
	assert.Contains(t, audit, `"span_id":"[REDACTED:github_token]"`)
	assert.Contains(t, audit, `"headers":{"[REDACTED:slack_token]":true}`)
	assert.Contains(t, logText, "sandbox.event.span_id: Str([REDACTED:github_token])")
	assert.Contains(t, requireVerifies(t, auditPath), "lines=2 events=2 sessions=1")
}
