package spanmap

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// AppendSpan appends the span for an operation's start and finish events to
// dst and returns it. Either event may be nil, not both: a start alone is a
// span marked incomplete (it ends at its start, status unset), a finish alone
// one marked start-missing that runs from finish ts minus duration_ms to
// finish ts. The span carries every attribute Mapper.AppendSpanEvents needs
// to give back the same events.
//
// Event ids that are OTel hex ids (32 or 16 hex digits, any case, not all
// zero) become the span's ids; otherwise DeriveTraceID and DeriveSpanID
// give them. What the span cannot hold travels in extension attributes:
//   - sandbox.event.trace_id, span_id, parent_span_id: the event's id
//     strings when they are not exactly the lowercase hex of the span's
//     ids; an empty value (pcommon.ValueTypeEmpty) stands for null;
//   - sandbox.event.version (int): the event version when it is not 1;
//   - sandbox.event.start_ts, finish_ts: the canonical ts when a span time
//     cannot hold it (an offset other than UTC, a naive time, or an instant
//     outside 1970..2262); the span time is then the same instant, clamped;
//   - sandbox.exec.stdout, stderr: output strings already decoded (the
//     Python HttpProxySink sends them after its policy ran);
//   - sandbox.incomplete, sandbox.event.start_missing (bool true): one
//     event alone, as above.
//
// op, version, trace_id and parent_span_id come from the start event for
// both, so a caller pairs only events that agree on them (internal/pairing
// does; the others leave as half spans).
func AppendSpan(dst ptrace.SpanSlice, start, finish *auditevent.Event) ptrace.Span {
	ref := start
	if ref == nil {
		ref = finish
	}
	if ref == nil {
		panic("spanmap.AppendSpan: both events are nil")
	}
	span := dst.AppendEmpty()
	span.SetName(semconv.SpanNamePrefix + ref.Op)
	span.SetKind(ptrace.SpanKindInternal)
	attrs := span.Attributes()
	attrs.EnsureCapacity(16)
	attrs.PutStr(semconv.AttrOperation, ref.Op)
	attrs.PutStr(semconv.AttrSessionID, ref.SessionID.String())

	setIDs(span, ref)
	if ref.Version != 1 {
		attrs.PutInt(semconv.AttrEventVersion, ref.Version)
	}

	if start != nil {
		t, exact := spanTime(start.TS)
		span.SetStartTimestamp(t)
		if !exact {
			attrs.PutStr(semconv.AttrStartTS, start.TS.String())
		}
		attrs.PutStr(semconv.AttrStartID, start.EventID.String())
		attrs.PutInt(semconv.AttrStartSeq, start.Seq)
		if !start.Data.IsEmpty() {
			attrs.PutStr(semconv.AttrStartData, start.Data.String())
		}
		if finish == nil {
			span.SetEndTimestamp(t)
			attrs.PutBool(semconv.AttrIncomplete, true)
			return span
		}
	}

	end, exact := spanTime(finish.TS)
	span.SetEndTimestamp(end)
	if !exact {
		attrs.PutStr(semconv.AttrFinishTS, finish.TS.String())
	}
	if start == nil {
		span.SetStartTimestamp(startFromDuration(end, finish.DurationMS))
		attrs.PutBool(semconv.AttrStartMissing, true)
	}
	attrs.PutStr(semconv.AttrFinishID, finish.EventID.String())
	attrs.PutInt(semconv.AttrFinishSeq, finish.Seq)
	// A finish without its own data inherits the start's, so write it only
	// when it differs from what it would inherit.
	var inherited auditevent.Data
	if start != nil {
		inherited = start.Data
	}
	if !finish.Data.Equal(inherited) {
		attrs.PutStr(semconv.AttrFinishData, finish.Data.String())
	}
	setFinishFields(span, finish)
	return span
}

// setIDs sets the span's ids from the event's, keeping whatever the span ids
// cannot spell in extension attributes.
func setIDs(span ptrace.Span, e *auditevent.Event) {
	attrs := span.Attributes()

	traceID, exact := EventTraceID(e)
	span.SetTraceID(traceID)
	if !exact {
		putOptStr(attrs, semconv.AttrEventTraceID, e.TraceID)
	}

	spanID, exact := EventSpanID(e)
	span.SetSpanID(spanID)
	if !exact {
		attrs.PutStr(semconv.AttrEventSpanID, e.SpanID)
	}

	// A null parent is the natural "no parent"; an empty string keeps no
	// parent id but is written down; anything else gets an id, derived the
	// same way as span ids so a child links to its parent's derived id.
	if e.ParentSpanID == nil {
		return
	}
	p := *e.ParentSpanID
	if p == "" {
		attrs.PutStr(semconv.AttrEventParentSpanID, p)
		return
	}
	parentID, ok := ParseSpanID(p)
	if ok {
		exact = isLowerHexOf(p, parentID[:])
	} else {
		parentID, exact = DeriveSpanID(e.SessionID, p), false
	}
	span.SetParentSpanID(parentID)
	if !exact {
		attrs.PutStr(semconv.AttrEventParentSpanID, p)
	}
}

func setFinishFields(span ptrace.Span, e *auditevent.Event) {
	attrs := span.Attributes()
	attrs.PutBool(semconv.AttrOK, e.OK)
	attrs.PutDouble(semconv.AttrDurationMS, e.DurationMS)
	if !e.OK {
		span.Status().SetCode(ptrace.StatusCodeError)
		if e.ErrorMessage != nil {
			span.Status().SetMessage(*e.ErrorMessage)
		}
	}
	if e.ErrorType != nil {
		attrs.PutStr(semconv.AttrErrorType, *e.ErrorType)
	}
	if e.ErrorCode != nil {
		attrs.PutStr(semconv.AttrErrorCode, *e.ErrorCode)
	}
	if e.ErrorMessage != nil {
		attrs.PutStr(semconv.AttrErrorMessage, *e.ErrorMessage)
	}
	if e.ErrorRetryable != nil {
		attrs.PutBool(semconv.AttrErrorRetryable, *e.ErrorRetryable)
	}
	if e.StdoutBytes != nil {
		attrs.PutEmptyBytes(semconv.AttrExecStdoutBytes).FromRaw(e.StdoutBytes)
	}
	if e.StderrBytes != nil {
		attrs.PutEmptyBytes(semconv.AttrExecStderrBytes).FromRaw(e.StderrBytes)
	}
	if e.Stdout != nil {
		attrs.PutStr(semconv.AttrExecStdout, *e.Stdout)
	}
	if e.Stderr != nil {
		attrs.PutStr(semconv.AttrExecStderr, *e.Stderr)
	}
}

// putOptStr writes s, or an empty value for null.
func putOptStr(attrs pcommon.Map, key string, s *string) {
	if s == nil {
		attrs.PutEmpty(key)
		return
	}
	attrs.PutStr(key, *s)
}

// spanTime converts an event ts to a span time and reports whether the span
// time gives back exactly that ts: only UTC instants between 1970 and 2262
// (where nanoseconds since the epoch fit in an int64) do.
func spanTime(ts auditevent.Timestamp) (pcommon.Timestamp, bool) {
	us := ts.UnixMicro()
	switch {
	case us < 0:
		return 0, false
	case us > math.MaxInt64/1000:
		return pcommon.Timestamp(math.MaxInt64), false
	}
	t := pcommon.Timestamp(us * 1000)
	return t, auditevent.TimestampFromUnixNano(int64(t)) == ts // t is within int64
}

// startFromDuration is end minus durationMS, kept within [0, end].
func startFromDuration(end pcommon.Timestamp, durationMS float64) pcommon.Timestamp {
	ns := durationMS * 1e6
	if !(ns > 0) { // also NaN
		return end
	}
	if ns >= float64(end) {
		return 0
	}
	return end - pcommon.Timestamp(ns)
}
