package logmap

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// bodyWithout is an exec start body with the ids of the span it maps to,
// less event_id and/or ts.
func bodyWithout(id, ts bool) string {
	b := `{"version":1,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","seq":1,"op":"exec","phase":"start",` +
		`"span_id":"00f067aa0ba902b7","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","data":{}`
	if !id {
		b += `,"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e"`
	}
	if !ts {
		b += `,"ts":"2026-03-14T15:09:26.535897Z"`
	}
	return b + "}"
}

func startRecord(body string, ts, observed pcommon.Timestamp) plog.LogRecord {
	lr := plog.NewLogRecord()
	lr.SetEventName("sandbox.session.start")
	lr.Body().SetStr(body)
	lr.SetTimestamp(ts)
	lr.SetObservedTimestamp(observed)
	return lr
}

// TestDefaultsFromTheRecord: a body without event_id takes the id the
// span it maps to gives its phase (docs/format.md), and one without ts
// takes the record's time, else its observed time, else the epoch; so
// every reading of one record gives one line.
func TestDefaultsFromTheRecord(t *testing.T) {
	at := time.Date(2026, 5, 1, 8, 30, 0, 123456789, time.UTC)
	seen := at.Add(time.Second)
	derived := uuid.NewSHA1(uuid.MustParse("d5522618-d9a4-5682-af63-f0e537900855"),
		[]byte("4bf92f3577b34da6a3ce929d0e0e4736/00f067aa0ba902b7/start")).String()
	for _, tc := range []struct {
		name           string
		noID, noTS     bool
		ts, observed   time.Time
		wantID, wantTS string
	}{
		{"no event_id", true, false, at, seen, derived, "2026-03-14T15:09:26.535897Z"},
		{"no ts", false, true, at, seen, "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e", "2026-05-01T08:30:00.123456Z"},
		{"neither, observed time only", true, true, time.Unix(0, 0), seen, derived, "2026-05-01T08:30:01.123456Z"},
		{"neither, no time", true, true, time.Unix(0, 0), time.Unix(0, 0), derived, "1970-01-01T00:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr := startRecord(bodyWithout(tc.noID, tc.noTS), pcommon.NewTimestampFromTime(tc.ts), pcommon.NewTimestampFromTime(tc.observed))
			var lines []string
			for range 2 {
				e, _, err := FromLogRecord(lr)
				require.NoError(t, err)
				lines = append(lines, string(auditevent.Line(&e)))
				assert.Equal(t, tc.wantID, e.EventID.String())
				assert.Equal(t, tc.wantTS, e.TS.String())
			}
			assert.Equal(t, lines[0], lines[1], "two readings of one record")
		})
	}
}

// TestRecordTimePastAnEventsRange: a body without ts whose record time
// cannot be an event's is refused, naming ts.
func TestRecordTimePastAnEventsRange(t *testing.T) {
	lr := startRecord(bodyWithout(false, true), pcommon.Timestamp(math.MaxUint64), 0)
	_, _, err := FromLogRecord(lr)
	fe, ok := errors.AsType[*auditevent.FieldError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, "ts", fe.Field)
}
