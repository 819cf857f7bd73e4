package logmap

import (
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

// absentFields notes which of the fields with a default a record's body
// leaves out. Their defaults come from the record, not from the clock or
// a random source, so that every reader of one record (the processor, the
// exporter) makes the same line of it (docs/format.md, "Inside the
// collector").
type absentFields struct {
	id, ts bool
}

func (a *absentFields) newID() (uuid.UUID, error) {
	a.id = true
	return uuid.Nil, nil
}

func (a *absentFields) now() time.Time {
	a.ts = true
	return time.Time{}
}

// fill sets the defaults of the fields the body of lr left out: the event
// id the span e maps to gives e's phase, as for a span without one, and
// the record's time (its observed time when it has none; the epoch when
// neither is set, as a span's unset start time is).
func (a *absentFields) fill(e *auditevent.Event, lr plog.LogRecord) error {
	if a.id {
		traceID, _ := spanmap.EventTraceID(e)
		spanID, _ := spanmap.EventSpanID(e)
		e.EventID = spanmap.DeriveEventID(traceID, spanID, e.Phase)
	}
	if a.ts {
		t := lr.Timestamp()
		if t == 0 {
			t = lr.ObservedTimestamp()
		}
		if uint64(t) > math.MaxInt64 {
			return &auditevent.FieldError{Field: "ts", Type: "missing",
				Msg: fmt.Sprintf("absent, and the record's time (%d ns) is after 2262-04-11, the latest an event can hold", uint64(t))}
		}
		e.TS = auditevent.TimestampFromUnixNano(int64(t))
	}
	return nil
}
