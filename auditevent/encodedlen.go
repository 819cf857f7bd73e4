package auditevent

import (
	"strconv"
	"unicode/utf8"
)

// The bytes of a line that do not depend on the event: keys, punctuation
// and the two quoted UUIDs (38 bytes each).
const (
	startFixed = len(`{"data":`+`,"event_id":`+`,"op":`+`,"parent_span_id":`+`,"phase":"start","seq":`+
		`,"session_id":`+`,"span_id":`+`,"trace_id":`+`,"ts":"`+`","version":`+`}`) + 2*38
	finishFixed = startFixed + len(`,"duration_ms":`+`,"error_code":`+`,"error_message":`+`,"error_retryable":`+
		`,"error_type":`+`,"ok":`+`,"stderr":`+`,"stdout":`) + len(`"finish"`) - len(`"start"`)
)

// EncodedLen is len(AppendJSON(nil, e)), worked out without building the
// line: a receiver sizes the memory an event will take by it, since escapes
// can make the line six times the JSON it was decoded from.
func EncodedLen(e *Event) int {
	var scratch [40]byte
	n := len(e.Data.Bytes()) + quotedLen(e.Op) + quotedLen(e.SpanID) +
		optQuotedLen(e.ParentSpanID) + optQuotedLen(e.TraceID) +
		len(strconv.AppendInt(scratch[:0], e.Seq, 10)) +
		len(e.TS.appendText(scratch[:0])) +
		len(strconv.AppendInt(scratch[:0], e.Version, 10))
	if e.Phase != PhaseFinish {
		return n + startFixed
	}
	n += finishFixed + len(appendPyFloat(scratch[:0], e.DurationMS)) +
		optQuotedLen(e.ErrorCode) + optQuotedLen(e.ErrorMessage) + optQuotedLen(e.ErrorType) +
		optQuotedLen(e.Stderr) + optQuotedLen(e.Stdout)
	switch {
	case e.ErrorRetryable == nil || *e.ErrorRetryable:
		n += len("null")
	default:
		n += len("false")
	}
	if e.OK {
		return n + len("true")
	}
	return n + len("false")
}

func optQuotedLen(s *string) int {
	if s == nil {
		return len("null")
	}
	return quotedLen(*s)
}

// quotedLen is len(appendQuoted(nil, s)).
func quotedLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		b := s[i]
		if b >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			n += 6
			if r >= 0x10000 {
				n += 6
			}
			i += size
			continue
		}
		switch {
		case safeASCII[b]:
			n++
		case b == '"' || b == '\\' || b == '\n' || b == '\r' || b == '\t' || b == '\b' || b == '\f':
			n += 2
		default:
			n += 6
		}
		i++
	}
	return n
}

// LargestField names the field that takes the most of e's canonical line,
// for an error about its size.
func LargestField(e *Event) string {
	best, size := "data", len(e.Data.Bytes())
	for _, f := range []struct {
		name string
		s    *string
	}{
		{"span_id", &e.SpanID}, {"op", &e.Op}, {"parent_span_id", e.ParentSpanID}, {"trace_id", e.TraceID},
		{"error_code", e.ErrorCode}, {"error_message", e.ErrorMessage}, {"error_type", e.ErrorType},
		{"stderr", e.Stderr}, {"stdout", e.Stdout},
	} {
		if f.s != nil {
			if n := quotedLen(*f.s); n > size {
				best, size = f.name, n
			}
		}
	}
	return best
}

// lineNumbers bounds the text of a line's numbers, timestamp and literals:
// seq and version (20 each), ts (32), duration_ms (24), four nulls or
// booleans (5 each).
const lineNumbers = 20 + 20 + 32 + 24 + 4*5

// LineBound bounds EncodedLen(e) without reading its text: a byte of a
// string takes at most six in a line (\u0001; a multi-byte rune takes at
// most three per byte). It costs a few additions, so a caller checks it
// first and counts exactly only for a large event.
func LineBound(e *Event) int {
	n := len(e.Data.Bytes()) + finishFixed + lineNumbers + 6*(len(e.Op)+len(e.SpanID)) + 4
	// Each field by name rather than a loop over an array of them: the
	// array is built per call, and every span's two events are bounded.
	n += optBound(e.ParentSpanID) + optBound(e.TraceID) + optBound(e.ErrorCode) + optBound(e.ErrorMessage) +
		optBound(e.ErrorType) + optBound(e.Stderr) + optBound(e.Stdout)
	return n
}

// optBound is LineBound's share for a nullable string: its quoted text's
// bound, or nothing for null (the literals are in lineNumbers).
func optBound(s *string) int {
	if s == nil {
		return 0
	}
	return 6*len(*s) + 2
}
