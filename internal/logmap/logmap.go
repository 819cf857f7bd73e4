// Package logmap carries audit events through the collector as log records
// (SPEC section 6): the body is the canonical line without its newline, so
// the event survives losslessly (big integers, float versus integer, nulls),
// and a few attributes make records easy to route and query. Raw exec output,
// which the canonical line never holds, travels in bytes attributes.
package logmap

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

// Event names of SPEC section 6.
const (
	EventNameStart  = "sandbox.session.start"
	EventNameFinish = "sandbox.session.finish"
)

// Log record attribute keys.
const (
	AttrSessionID   = "sandbox.session.id"
	AttrOperation   = "sandbox.operation"
	AttrPhase       = "sandbox.event.phase"
	AttrSeq         = "sandbox.event.seq"
	AttrStdoutBytes = "sandbox.exec.stdout_bytes"
	AttrStderrBytes = "sandbox.exec.stderr_bytes"
)

// ErrNotAuditEvent marks a log record that is not an audit event (another
// event name, or a body that is not a string). Callers skip and count it.
var ErrNotAuditEvent = errors.New("not a sandbox audit event log record")

// EventName returns the log event name of an event's phase.
func EventName(p auditevent.Phase) string {
	if p == auditevent.PhaseFinish {
		return EventNameFinish
	}
	return EventNameStart
}

// AppendLogRecord appends the log record for e to dst and returns it. The
// observed timestamp is the current time.
func AppendLogRecord(dst plog.LogRecordSlice, e *auditevent.Event) plog.LogRecord {
	lr := dst.AppendEmpty()
	setLogRecord(lr, e, pcommon.NewTimestampFromTime(time.Now()))
	return lr
}

func setLogRecord(lr plog.LogRecord, e *auditevent.Event, observed pcommon.Timestamp) {
	lr.SetEventName(EventName(e.Phase))
	lr.SetTimestamp(logTime(e.TS))
	lr.SetObservedTimestamp(observed)
	if e.TraceID != nil {
		if id, ok := spanmap.ParseTraceID(*e.TraceID); ok {
			lr.SetTraceID(id)
		}
	}
	if id, ok := spanmap.ParseSpanID(e.SpanID); ok {
		lr.SetSpanID(id)
	}
	if e.IsFinish() && !e.OK {
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
		lr.SetSeverityText("WARN")
	} else {
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
	}
	// Build the body in place: one allocation for the string, none for a
	// scratch buffer beyond what the line needs.
	lr.Body().SetStr(string(auditevent.AppendJSON(make([]byte, 0, 512), e)))

	attrs := lr.Attributes()
	attrs.EnsureCapacity(6)
	attrs.PutStr(AttrSessionID, e.SessionID.String())
	attrs.PutStr(AttrOperation, e.Op)
	attrs.PutStr(AttrPhase, e.Phase.String())
	attrs.PutInt(AttrSeq, e.Seq)
	if e.StdoutBytes != nil {
		attrs.PutEmptyBytes(AttrStdoutBytes).FromRaw(e.StdoutBytes)
	}
	if e.StderrBytes != nil {
		attrs.PutEmptyBytes(AttrStderrBytes).FromRaw(e.StderrBytes)
	}
}

// logTime is ts as a log timestamp; instants before 1970 or after 2262
// cannot be one and are left unset (the body keeps the exact ts).
func logTime(ts auditevent.Timestamp) pcommon.Timestamp {
	us := ts.UnixMicro()
	if us < 0 || us > math.MaxInt64/1000 {
		return 0
	}
	return pcommon.Timestamp(us * 1000)
}

// FromLogRecord reads the event back from a record AppendLogRecord made (or
// any record following SPEC section 6). It returns ErrNotAuditEvent for
// records that are not audit events, and a decode error (wrapping the
// *auditevent.FieldError) for records that claim to be one but are not valid.
// The raw exec output comes back from the bytes attributes (a standard base64
// string is accepted too).
func FromLogRecord(lr plog.LogRecord) (auditevent.Event, error) {
	var phase auditevent.Phase
	switch lr.EventName() {
	case EventNameStart:
		phase = auditevent.PhaseStart
	case EventNameFinish:
		phase = auditevent.PhaseFinish
	default:
		return auditevent.Event{}, ErrNotAuditEvent
	}
	if lr.Body().Type() != pcommon.ValueTypeStr {
		return auditevent.Event{}, ErrNotAuditEvent
	}
	e, err := auditevent.Decode([]byte(lr.Body().Str()))
	if err != nil {
		return auditevent.Event{}, fmt.Errorf("%s log record body: %w", lr.EventName(), err)
	}
	if e.Phase != phase {
		return auditevent.Event{}, fmt.Errorf("%s log record holds a %s event", lr.EventName(), e.Phase)
	}
	if e.StdoutBytes, err = rawOutput(lr.Attributes(), AttrStdoutBytes); err != nil {
		return auditevent.Event{}, err
	}
	if e.StderrBytes, err = rawOutput(lr.Attributes(), AttrStderrBytes); err != nil {
		return auditevent.Event{}, err
	}
	return e, nil
}

func rawOutput(attrs pcommon.Map, key string) ([]byte, error) {
	v, ok := attrs.Get(key)
	if !ok {
		return nil, nil
	}
	switch v.Type() {
	case pcommon.ValueTypeBytes:
		if b := v.Bytes().AsRaw(); b != nil {
			return b, nil
		}
		return []byte{}, nil // present but empty is not "no output"
	case pcommon.ValueTypeStr:
		b, err := base64.StdEncoding.DecodeString(v.Str())
		if err != nil {
			return nil, fmt.Errorf("log record attribute %q: invalid base64: %w", key, err)
		}
		return b, nil
	case pcommon.ValueTypeEmpty:
		return nil, nil
	}
	return nil, fmt.Errorf("log record attribute %q: want bytes, got %s", key, v.Type())
}
