package sandboxauditexporter

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
)

// TestAppendEventsFollowsTheOpOfEachEvent: a batch whose ops change from
// event to event, under policies that differ by op (exec keeps secrets in
// clear, read redacts), encodes each event under its own op's policy.
func TestAppendEventsFollowsTheOpOfEachEvent(t *testing.T) {
	table, err := payloadpolicy.NewTable(auditevent.PolicySet{
		ByOp: map[string]auditevent.PolicyOverride{"exec": {Redact: auditevent.RedactOverride{Enabled: auditevent.Ptr(false)}}},
	})
	require.NoError(t, err)
	data, err := auditevent.ParseDataString(`{"path":"/w/x","token":"hunter2-hunter2"}`)
	require.NoError(t, err)
	var events []auditevent.Event
	for i, op := range []string{"exec", "exec", "read", "read", "exec", "read"} {
		events = append(events, auditevent.Event{
			Version: 1, EventID: uuid.MustParse("0b9d8c7e-6f5a-4b3c-8d2e-00000000000" + string(rune('0'+i))),
			SessionID: uuid.MustParse(sessionA), Seq: int64(i + 1), Phase: auditevent.PhaseStart,
			Op: op, SpanID: "00f067aa0ba902b7", Data: data,
		})
	}
	lines := strings.Split(strings.TrimSuffix(string(appendEvents(nil, table, events, nil, nil)), "\n"), "\n")
	require.Len(t, lines, len(events))
	for i, line := range lines {
		if events[i].Op == "exec" {
			assert.Contains(t, line, `"token":"hunter2-hunter2"`, "event %d (exec)", i)
		} else {
			assert.NotContains(t, line, "hunter2", "event %d (read)", i)
		}
	}
}
