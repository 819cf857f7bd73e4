package payloadpolicy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// TestSecretsInIdsAndErrorTypeAreCut: the receiver takes any string as
// span_id, parent_span_id, trace_id and error_type, and a careless client
// may put a credential there (an exception's text as its type, a header's
// value as a trace id). Each is cut, with data and the error message clean,
// so the line is redacted for these fields alone.
func TestSecretsInIdsAndErrorTypeAreCut(t *testing.T) {
	tab, err := NewTable(auditevent.PolicySet{})
	require.NoError(t, err)
	pol := tab.Get("exec")
	for _, phase := range []auditevent.Phase{auditevent.PhaseStart, auditevent.PhaseFinish} {
		ev := auditevent.Event{
			Version: 1, Op: "exec", Phase: phase, Seq: 2, Data: auditevent.MustParseData(`{"command":["ls"]}`),
			SpanID:       redacttest.GitHubToken,
			ParentSpanID: auditevent.Ptr("postgres://app:hunter2hunter2@db/prod"),
			TraceID:      auditevent.Ptr(redacttest.AWSKeyID),
		}
		if phase == auditevent.PhaseFinish {
			ev.ErrorType = auditevent.Ptr("RuntimeError: token " + redacttest.GitHubToken)
		}
		var cuts redact.Counts
		line := string(pol.AppendLine(nil, &ev, &cuts))
		for _, secret := range []string{redacttest.GitHubToken, "hunter2hunter2", redacttest.AWSKeyID} {
			assert.NotContains(t, line, secret, "%s: %s", phase, line)
		}
		assert.Contains(t, line, `"span_id":"[REDACTED:github_token]"`)
		assert.Contains(t, line, `"trace_id":"[REDACTED:aws_access_key]"`)
		assert.Contains(t, line, `"parent_span_id":"postgres://app:[REDACTED:url_password]@db/prod"`)
		if phase == auditevent.PhaseFinish {
			assert.Contains(t, line, `"error_type":"RuntimeError: token [REDACTED:github_token]"`)
		}
		assert.Equal(t, len(line), pol.LineLen(&ev), "LineLen measures the redacted line")
	}
}

// TestTracerIdsStayWhole: ids as OTLP, UUIDs and the Python SDK make them
// are never cut, not even by a user pattern that matches hex (a hash's
// pattern), and an event with only such ids is encoded without a copy.
func TestTracerIdsStayWhole(t *testing.T) {
	tab, err := NewTable(auditevent.PolicySet{Default: auditevent.PolicyOverride{
		Redact: auditevent.RedactOverride{Patterns: []string{`[0-9a-f]{16}`}},
	}})
	require.NoError(t, err)
	pol := tab.Get("read")
	for _, id := range []string{"00f067aa0ba902b7", "sandbox_op_0af7651916cd43dd8448eb211c80319c", "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b", ""} {
		ev := auditevent.Event{Version: 1, Op: "read", Phase: auditevent.PhaseStart, Seq: 1, Data: auditevent.MustParseData(`{}`),
			SpanID: id, ParentSpanID: &id, TraceID: auditevent.Ptr("4bf92f3577b34da6a3ce929d0e0e4736")}
		line := string(pol.AppendLine(nil, &ev, nil))
		assert.Equal(t, string(auditevent.Line(&ev)), line, id)
		assert.False(t, strings.Contains(line, "REDACTED"), line)
	}
}
