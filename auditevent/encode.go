package auditevent

// AppendLine appends the canonical line for e, with its trailing newline,
// to dst and returns the extended slice. The output is byte-identical to
// the Python reference's event_to_json_line: the keys of each variant are
// written in their sorted order directly, so no sorting happens here and,
// given a dst with room, nothing is allocated.
//
// Raw exec output (StdoutBytes, StderrBytes) is never written; apply a
// Policy first to turn it into Stdout/Stderr.
func AppendLine(dst []byte, e *Event) []byte {
	dst = AppendJSON(dst, e)
	return append(dst, '\n')
}

// AppendJSON is AppendLine without the newline: the log-record body form.
func AppendJSON(dst []byte, e *Event) []byte {
	return appendJSON(dst, e, e.Data, e.Stdout, e.Stderr)
}

// appendJSON writes e with data, stdout and stderr in place of its own, so
// a payload policy can encode its result without copying the event.
func appendJSON(dst []byte, e *Event, data Data, stdout, stderr *string) []byte {
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
	dst = append(dst, `,"op":`...)
	dst = appendQuoted(dst, e.Op)
	dst = append(dst, `,"parent_span_id":`...)
	dst = appendOptQuoted(dst, e.ParentSpanID)
	if finish {
		dst = append(dst, `,"phase":"finish","seq":`...)
	} else {
		dst = append(dst, `,"phase":"start","seq":`...)
	}
	dst = appendInt(dst, e.Seq)
	dst = append(dst, `,"session_id":`...)
	dst = appendUUID(dst, e.SessionID)
	dst = append(dst, `,"span_id":`...)
	dst = appendQuoted(dst, e.SpanID)
	if finish {
		dst = append(dst, `,"stderr":`...)
		dst = appendOptQuoted(dst, stderr)
		dst = append(dst, `,"stdout":`...)
		dst = appendOptQuoted(dst, stdout)
	}
	dst = append(dst, `,"trace_id":`...)
	dst = appendOptQuoted(dst, e.TraceID)
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
