// Package logmap carries audit events through the collector as log records
// (docs/format.md, "Inside the collector"): the body is the canonical line
// without its newline, so the event survives losslessly (big integers, float
// versus integer, nulls), and a few attributes make records easy to route
// and query. Raw exec output, which the canonical line never holds, travels
// in bytes attributes.
package logmap

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// ErrNotAuditEvent marks a log record that is not an audit event: its event
// name is not one of an audit event's. Callers skip and count it.
var ErrNotAuditEvent = errors.New("not a sandbox audit event log record")

// eventName returns the log event name of an event's phase.
func eventName(p auditevent.Phase) string {
	if p == auditevent.PhaseFinish {
		return semconv.EventSessionFinish
	}
	return semconv.EventSessionStart
}

// EventPhase is the phase of the audit event a log record of event name
// name holds; ok is false for a name that is not an audit event's.
func EventPhase(name string) (phase auditevent.Phase, ok bool) {
	switch name {
	case semconv.EventSessionStart:
		return auditevent.PhaseStart, true
	case semconv.EventSessionFinish:
		return auditevent.PhaseFinish, true
	}
	return phase, false
}

// setLogRecord fills lr with e's record (docs/format.md, "Inside the
// collector").
func setLogRecord(lr plog.LogRecord, e *auditevent.Event, observed pcommon.Timestamp) {
	lr.SetEventName(eventName(e.Phase))
	lr.SetTimestamp(logTime(e.TS))
	lr.SetObservedTimestamp(observed)
	// The ids of the span the event maps to (docs/format.md), derived from
	// the session where the event's own are not OTel ids: a record then
	// correlates with that span, and trace-id routing (loadbalancing, the
	// kafka exporter's partition_logs_by_trace_id) keeps a session together.
	traceID, _ := spanmap.EventTraceID(e)
	lr.SetTraceID(traceID)
	spanID, _ := spanmap.EventSpanID(e)
	lr.SetSpanID(spanID)
	if e.IsFinish() && !e.OK {
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
		lr.SetSeverityText("WARN")
	} else {
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
	}
	// One allocation of the line's exact size, which becomes the string:
	// nothing writes to it afterwards. A large event's line is the bulk of
	// what the pipeline holds, so no growth and no second copy.
	line := auditevent.AppendJSON(make([]byte, 0, auditevent.EncodedLen(e)), e)
	lr.Body().SetStr(unsafe.String(unsafe.SliceData(line), len(line)))

	attrs := lr.Attributes()
	attrs.EnsureCapacity(6)
	attrs.PutStr(semconv.AttrSessionID, e.SessionID.String())
	attrs.PutStr(semconv.AttrOperation, e.Op)
	attrs.PutStr(semconv.AttrEventPhase, e.Phase.String())
	attrs.PutInt(semconv.AttrEventSeq, e.Seq)
	if e.StdoutBytes != nil {
		attrs.PutEmptyBytes(semconv.AttrExecStdoutBytes).FromRaw(e.StdoutBytes)
	}
	if e.StderrBytes != nil {
		attrs.PutEmptyBytes(semconv.AttrExecStderrBytes).FromRaw(e.StderrBytes)
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

// FromLogRecord reads the event back from a record EventsToLogs made (or any
// record as docs/format.md describes it). It returns ErrNotAuditEvent for
// records that are not audit events, and a decode error (wrapping the
// *auditevent.FieldError) for records that claim to be one by their event
// name but are not valid, a body that is no line (bodyLine) included.
// A body without event_id or ts takes them from the record, so that every
// reader of one record makes the same event of it.
// The raw exec output comes back from the bytes attributes (a standard base64
// string is accepted too). A malformed output attribute is left out, as the
// span mapping leaves it out (losing the operation's record over its output
// would be worse): the event comes back without it and without that
// stream's text, and dropped says which (a *spanmap.AttrError, naming the
// attribute only).
func FromLogRecord(lr plog.LogRecord) (e auditevent.Event, dropped, err error) {
	return fromLogRecord(lr, auditevent.DecodeOptions{})
}

// fromLogRecord is FromLogRecord decoding with opts.
func fromLogRecord(lr plog.LogRecord, opts auditevent.DecodeOptions) (e auditevent.Event, dropped, err error) {
	phase, named := EventPhase(lr.EventName())
	if !named {
		return auditevent.Event{}, nil, ErrNotAuditEvent
	}
	// Named as an event, it claims to be one: a body that is no line is
	// refused, not skipped, so its sender hears that nothing was written
	// of it.
	line, err := bodyLine(lr.Body())
	if err == nil {
		err = decodeBody(lr, line, opts, &e)
	}
	if err != nil {
		return auditevent.Event{}, nil, fmt.Errorf("%s log record body: %w", lr.EventName(), err)
	}
	if e.Phase != phase {
		return auditevent.Event{}, nil, fmt.Errorf("%s log record holds a %s event", lr.EventName(), e.Phase)
	}
	out, errOut := rawValues(lr.Attributes())
	var badOut, badErr error
	e.StdoutBytes, badOut = rawOutput(out, semconv.AttrExecStdoutBytes)
	e.StderrBytes, badErr = rawOutput(errOut, semconv.AttrExecStderrBytes)
	// Malformed raw output takes the text it was sent to replace along, as
	// in the span mapping.
	if badOut != nil {
		e.Stdout = nil
	}
	if badErr != nil {
		e.Stderr = nil
	}
	return e, errors.Join(badOut, badErr), nil
}

// attr is an attribute's value, if present.
type attr struct {
	v  pcommon.Value
	ok bool
}

// rawValues returns the last copy of each raw output attribute. OTLP can
// name a key more than once; the span mapping reads the last copy, and so
// does this, while pcommon.Map's Get would return the first.
func rawValues(attrs pcommon.Map) (stdout, stderr attr) {
	for k, v := range attrs.All() {
		switch k {
		case semconv.AttrExecStdoutBytes:
			stdout = attr{v, true}
		case semconv.AttrExecStderrBytes:
			stderr = attr{v, true}
		}
	}
	return stdout, stderr
}

// rawOutput decodes a, the raw exec output attribute key; absent is no
// output, and so is a malformed one, for which it says why.
func rawOutput(a attr, key string) ([]byte, error) {
	if !a.ok {
		return nil, nil
	}
	b, err := spanmap.DecodeExecOutput(a.v)
	if err != nil {
		return nil, &spanmap.AttrError{Attr: key, Msg: "output dropped", Err: err}
	}
	return b, nil
}

// BodyHolds is what a record's body holds, read as an event line.
type BodyHolds uint8

const (
	// BodyNoEvent: the body cannot be an event line (it is no object
	// naming a phase).
	BodyNoEvent BodyHolds = iota
	// BodyEvent: the body is an event line.
	BodyEvent
	// BodyNotDecoded: the body may be an event line but does not decode
	// as one: an object that is no event, a line cut short or run on, or
	// bytes that are not UTF-8.
	BodyNotDecoded
)

// ReadEventInBody reads the event a record's body holds as text
// (bodyLine), whatever the record's event name: an event line under
// another name, or none, as a log shipper tailing a JSONL file sends it.
// Fields left out take the defaults FromLogRecord gives them. A body that
// is not an event is BodyNoEvent, or BodyNotDecoded when it may be a
// broken one. The exporter writes no line for such a record
// (ErrNotAuditEvent); the processor reads it to keep the output in it from
// a backend.
func ReadEventInBody(lr plog.LogRecord) (auditevent.Event, BodyHolds) {
	// Most bodies a processor sees are plain text or JSON logs of other
	// kinds: only an object naming a phase can be an event, so the rest are
	// not decoded (and no error made of them), nor bytes copied.
	if !mayBeEvent(lr.Body()) {
		return auditevent.Event{}, BodyNoEvent
	}
	var e auditevent.Event
	line, err := bodyLine(lr.Body())
	if err != nil || decodeBody(lr, line, auditevent.DecodeOptions{}, &e) != nil {
		return auditevent.Event{}, BodyNotDecoded
	}
	return e, BodyEvent
}

// bodyLine is the text of a body that can hold an event's line: a string,
// or bytes holding UTF-8 text (a log shipper's line left undecoded, as the
// filelog receiver's `encoding: nop` leaves it), read as that string. Bytes
// are copied once: the text and the event's data viewing it must not
// change with the record. Other bodies, and bytes that are not UTF-8, hold
// no line: the *auditevent.FieldError, naming no field, says why.
func bodyLine(body pcommon.Value) (string, error) {
	switch body.Type() {
	case pcommon.ValueTypeStr:
		return body.Str(), nil
	case pcommon.ValueTypeBytes:
		b := body.Bytes().AsRaw()
		if !utf8.Valid(b) {
			return "", &auditevent.FieldError{Type: "string_unicode", Msg: "the body is bytes that are not UTF-8 text"}
		}
		return unsafe.String(unsafe.SliceData(b), len(b)), nil
	}
	return "", &auditevent.FieldError{
		Type: "string_type", Msg: "the body is " + body.Type().String() + ", not the event's line as a string or bytes",
	}
}

// decodeBody decodes line, lr's body (bodyLine), into e with opts, the
// fields the line leaves out taking the defaults the record gives them
// (absentFields).
func decodeBody(lr plog.LogRecord, line string, opts auditevent.DecodeOptions, e *auditevent.Event) error {
	var absent absentFields
	opts.NewID, opts.Now = absent.newID, absent.now
	if err := opts.DecodeStringInto(line, e); err != nil {
		return err
	}
	return absent.fill(e, lr)
}

// mayBeEvent reports whether body could decode as an event: text or bytes
// holding a JSON object with a "phase" member, which an event cannot lack.
// Without an escape the key is spelled out whole; the only escape that
// makes a letter is \uXXXX, so text holding one is left to the decoder.
// Bytes are read in place.
func mayBeEvent(body pcommon.Value) bool {
	switch body.Type() {
	case pcommon.ValueTypeStr:
		s := body.Str()
		return isObjectText(s) && (strings.Contains(s, `"phase"`) || strings.Contains(s, `\u`))
	case pcommon.ValueTypeBytes:
		return mayBeEventBytes(body.Bytes())
	}
	return false
}

// isObjectText reports whether s, past the blanks JSON allows, opens an
// object.
func isObjectText(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	return s != "" && s[0] == '{'
}

// mayBeEventBytes is mayBeEvent for bytes, which pcommon lends out only
// as a copy or one byte at a time.
func mayBeEventBytes(b pcommon.ByteSlice) bool {
	i, n := 0, b.Len()
	for i < n && isBlank(b.At(i)) {
		i++
	}
	if i == n || b.At(i) != '{' {
		return false
	}
	const key = `"phase"`
	for ; i < n; i++ {
		switch b.At(i) {
		case '\\':
			if i+1 < n && b.At(i+1) == 'u' {
				return true
			}
		case '"':
			if i+len(key) <= n && hasAt(b, i, key) {
				return true
			}
		}
	}
	return false
}

// isBlank reports whether c is a blank JSON allows between tokens.
func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

// hasAt reports whether b holds s at i; b must be long enough.
func hasAt(b pcommon.ByteSlice, i int, s string) bool {
	for j := range len(s) {
		if b.At(i+j) != s[j] {
			return false
		}
	}
	return true
}
