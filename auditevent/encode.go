package auditevent

import (
	"unsafe"

	"github.com/google/uuid"
)

// AppendLine appends the canonical line for e, with its trailing newline,
// to dst and returns the extended slice. The output is byte-identical to
// the Python reference's event_to_json_line: the keys of each variant are
// written in their sorted order directly, so no sorting happens here and,
// given a dst with room, nothing is allocated.
//
// Raw exec output (StdoutBytes, StderrBytes) is never written; apply a
// Policy first to turn it into Stdout/Stderr.
func AppendLine(dst []byte, e *Event) []byte {
	return AppendSpanLine(dst, e, nil)
}

// AppendSpanLine is AppendLine copying the fields e shares with the line
// sl saw last, when e's span is that line's (see SpanLines); sl may be nil.
func AppendSpanLine(dst []byte, e *Event, sl *SpanLines) []byte {
	return appendLine(dst, e, e.Data, e.Stdout, e.Stderr, sl)
}

// appendLine is appendJSON with the newline, after which sl (nil: none)
// records where the line ends.
func appendLine(dst []byte, e *Event, data Data, stdout, stderr *string, sl *SpanLines) []byte {
	dst = appendJSON(dst, e, data, stdout, stderr, sl)
	dst = append(dst, '\n')
	sl.wrote(dst)
	return dst
}

// AppendJSON is AppendLine without the newline: the log-record body form.
func AppendJSON(dst []byte, e *Event) []byte {
	return appendJSON(dst, e, e.Data, e.Stdout, e.Stderr, nil)
}

// SpanLines lets the lines of a span's events share the text of the
// fields they share: op and parent_span_id, session_id and span_id, and
// trace_id. A line whose fields equal those of the line before it, written
// with the same SpanLines into the same buffer, copies their text from it
// instead of encoding it again (about a twentieth of a span's encoding).
// Use one SpanLines per buffer, and only append to the buffer between
// lines: a line is copied from only while the buffer still ends where it
// did.
type SpanLines struct {
	op, span string
	// parent and trace are the values, not the pointers: a caller may set
	// what a pointer points to between lines.
	parent, trace       string
	hasParent, hasTrace bool
	session             uuid.UUID
	// runs are the three stretches of the last line's text that hold
	// those fields, as offsets in the buffer.
	runs [3][2]int
	// base and end are the buffer's array and length after the last line.
	base *byte
	end  int
}

// follows reports whether e's line, about to be appended to dst, may copy
// the shared fields of the line before it.
func (sl *SpanLines) follows(dst []byte, e *Event) bool {
	return sl != nil && sl.end == len(dst) && sl.base == unsafe.SliceData(dst) && sl.end > 0 &&
		e.SessionID == sl.session && e.SpanID == sl.span && e.Op == sl.op &&
		sameOpt(e.ParentSpanID, sl.parent, sl.hasParent) && sameOpt(e.TraceID, sl.trace, sl.hasTrace)
}

// sameOpt reports whether the nullable string a is the value v (when has)
// or null (when not).
func sameOpt(a *string, v string, has bool) bool {
	if a == nil {
		return !has
	}
	return has && *a == v
}

// optValue is a nullable string's value, and whether it has one.
func optValue(a *string) (string, bool) {
	if a == nil {
		return "", false
	}
	return *a, true
}

// saw records the shared fields of the line just written, and where.
func (sl *SpanLines) saw(e *Event, runs [3][2]int) {
	if sl == nil {
		return
	}
	sl.op, sl.span, sl.session = e.Op, e.SpanID, e.SessionID
	sl.parent, sl.hasParent = optValue(e.ParentSpanID)
	sl.trace, sl.hasTrace = optValue(e.TraceID)
	sl.runs = runs
}

// wrote records where the buffer ends after a line.
func (sl *SpanLines) wrote(dst []byte) {
	if sl != nil {
		sl.base, sl.end = unsafe.SliceData(dst), len(dst)
	}
}

// appendRun appends the text of run r of the line before: dst still holds
// it. A growing append reads it from the old array, which stays intact.
func (sl *SpanLines) appendRun(dst []byte, r int) []byte {
	return append(dst, dst[sl.runs[r][0]:sl.runs[r][1]]...)
}

// appendJSON writes e with data, stdout and stderr in place of its own, so
// a payload policy can encode its result without copying the event; sl
// (nil: none) supplies the shared fields' text of the line before.
func appendJSON(dst []byte, e *Event, data Data, stdout, stderr *string, sl *SpanLines) []byte {
	copied := sl.follows(dst, e)
	var runs [3][2]int
	finish := e.Phase == PhaseFinish
	dst = append(dst, `{"data":`...)
	dst = append(dst, data.Bytes()...)
	if finish {
		dst = append(dst, `,"duration_ms":`...)
		dst = appendPyFloat(dst, e.DurationMS)
		if e.ErrorCode == nil && e.ErrorMessage == nil && e.ErrorRetryable == nil && e.ErrorType == nil {
			// Most finishes: one append for the four nulls.
			dst = append(dst, noErrorFields...)
		} else {
			dst = appendErrorFields(dst, e)
		}
	}
	dst = append(dst, `,"event_id":`...)
	dst = appendUUID(dst, e.EventID)
	if finish {
		if e.OK {
			dst = append(dst, `,"ok":true`...)
		} else {
			dst = append(dst, `,"ok":false`...)
		}
	}
	runs[0][0] = len(dst)
	if copied {
		dst = sl.appendRun(dst, 0)
	} else {
		dst = append(dst, `,"op":`...)
		dst = appendQuoted(dst, e.Op)
		dst = append(dst, `,"parent_span_id":`...)
		dst = appendOptQuoted(dst, e.ParentSpanID)
	}
	runs[0][1] = len(dst)
	if finish {
		dst = append(dst, `,"phase":"finish","seq":`...)
	} else {
		dst = append(dst, `,"phase":"start","seq":`...)
	}
	dst = appendInt(dst, e.Seq)
	runs[1][0] = len(dst)
	if copied {
		dst = sl.appendRun(dst, 1)
	} else {
		dst = append(dst, `,"session_id":`...)
		dst = appendUUID(dst, e.SessionID)
		dst = append(dst, `,"span_id":`...)
		dst = appendQuoted(dst, e.SpanID)
	}
	runs[1][1] = len(dst)
	if finish {
		dst = append(dst, `,"stderr":`...)
		dst = appendOptQuoted(dst, stderr)
		dst = append(dst, `,"stdout":`...)
		dst = appendOptQuoted(dst, stdout)
	}
	runs[2][0] = len(dst)
	if copied {
		dst = sl.appendRun(dst, 2)
	} else {
		dst = append(dst, `,"trace_id":`...)
		dst = appendOptQuoted(dst, e.TraceID)
	}
	runs[2][1] = len(dst)
	sl.saw(e, runs)
	dst = append(dst, `,"ts":"`...)
	dst = e.TS.appendText(dst)
	dst = append(dst, `","version":`...)
	dst = appendInt(dst, e.Version)
	return append(dst, '}')
}

// noErrorFields is a finish line's error fields when it has none.
const noErrorFields = `,"error_code":null,"error_message":null,"error_retryable":null,"error_type":null`

// appendErrorFields writes a finish line's error fields, from error_code
// to error_type.
func appendErrorFields(dst []byte, e *Event) []byte {
	dst = append(dst, `,"error_code":`...)
	dst = appendOptQuoted(dst, e.ErrorCode)
	dst = append(dst, `,"error_message":`...)
	dst = appendOptQuoted(dst, e.ErrorMessage)
	dst = append(dst, `,"error_retryable":`...)
	switch {
	case e.ErrorRetryable == nil:
		dst = append(dst, "null"...)
	case *e.ErrorRetryable:
		dst = append(dst, "true"...)
	default:
		dst = append(dst, "false"...)
	}
	dst = append(dst, `,"error_type":`...)
	return appendOptQuoted(dst, e.ErrorType)
}

// Line returns the canonical line for e as a new slice.
func Line(e *Event) []byte { return AppendLine(make([]byte, 0, 512), e) }
