package logmap

import (
	"errors"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// EventsToLogs puts events into one ResourceLogs/ScopeLogs named scopeName,
// in order.
func EventsToLogs(events []auditevent.Event, scopeName string) plog.Logs {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	records := sl.LogRecords()
	records.EnsureCapacity(len(events))
	now := pcommon.NewTimestampFromTime(time.Now())
	for i := range events {
		setLogRecord(records.AppendEmpty(), &events[i], now)
	}
	return ld
}

// Stats counts what AppendLogs did.
type Stats struct {
	// Records is the number of log records looked at.
	Records int
	// Events is the number of events appended.
	Events int
	// NotAudit counts records that are not audit events (skipped).
	NotAudit int
	// Invalid counts records that claim to be audit events but do not
	// decode; FirstInvalid and LastInvalid are the reasons.
	Invalid int
	// TooLong counts the invalid records whose data passes the limit.
	TooLong      int
	FirstInvalid error
	LastInvalid  error
	// Dropped counts events kept without a raw-output attribute that was
	// malformed; LastDropped is the last such attribute's *spanmap.AttrError.
	Dropped     int
	LastDropped error
}

// AppendLogs appends the events of every audit event record in ld to dst,
// in order, skipping and counting the rest.
func AppendLogs(dst []auditevent.Event, ld plog.Logs) ([]auditevent.Event, Stats) {
	return AppendLogsLimit(dst, ld, 0)
}

// AppendLogsLimit is AppendLogs refusing a record whose data's canonical
// text would pass maxData bytes (0: no limit), before that text is built.
func AppendLogsLimit(dst []auditevent.Event, ld plog.Logs, maxData int) ([]auditevent.Event, Stats) {
	opts := auditevent.DecodeOptions{MaxDataBytes: maxData}
	var st Stats
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			records := sls.At(j).LogRecords()
			for k := 0; k < records.Len(); k++ {
				st.Records++
				e, dropped, err := fromLogRecord(records.At(k), opts)
				if dropped != nil { // nil whenever err is not
					st.Dropped++
					st.LastDropped = dropped
				}
				switch {
				case errors.Is(err, ErrNotAuditEvent):
					st.NotAudit++
				case err != nil:
					if st.Invalid == 0 {
						st.FirstInvalid = err
					}
					st.LastInvalid = err
					st.Invalid++
					if _, ok := errors.AsType[*auditevent.TooLongError](err); ok {
						st.TooLong++
					}
				default:
					dst = append(dst, e)
					st.Events++
				}
			}
		}
	}
	return dst, st
}
