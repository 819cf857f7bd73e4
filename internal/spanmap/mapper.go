package spanmap

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// DefaultMaxSessions is the seq-counter capacity NewMapper uses for a
// non-positive maxSessions.
const DefaultMaxSessions = 10_000

// Mapper turns sandbox spans into audit events. It is safe for concurrent
// use.
//
// Seqs are the int attributes sandbox.event.start_seq / finish_seq (a
// double with an integral value is accepted, as some SDKs send every
// number as a double; strings are refused, as the intake refuses them). A
// missing seq is assigned per session in arrival order: one more than the
// highest seq seen or assigned for that session, from 1; an event mapped
// again (same session and event id) within the last assignedWindow events
// given a seq gets the one it got. The counters are
// kept for at most maxSessions sessions, least recently used out; an
// evicted session starts again at 1, so its assigned seqs can repeat. Size
// maxSessions above the sessions active at once, and use one Mapper per
// pipeline component.
//
// trace_id, span_id and parent_span_id are the span's ids in lowercase
// hex; an all-zero trace or parent id is null.
type Mapper struct {
	mu   sync.Mutex
	seqs *seqCounters
	// maxLine bounds the canonical text of a span's data (0: none); see
	// WithMaxLineBytes.
	maxLine int
}

// NewMapper returns a Mapper that keeps seq counters for at most maxSessions
// sessions (DefaultMaxSessions when maxSessions <= 0).
func NewMapper(maxSessions int) *Mapper {
	if maxSessions <= 0 {
		maxSessions = DefaultMaxSessions
	}
	return &Mapper{seqs: newSeqCounters(maxSessions)}
}

// WithMaxLineBytes makes m refuse a span whose start or finish data would
// make a canonical line longer than n bytes, before that text is built:
// escapes make a line up to six times its span's attribute. Call it before
// m is used.
func (m *Mapper) WithMaxLineBytes(n int) *Mapper {
	m.maxLine = n
	return m
}

// SeqEvictions returns how many sessions' seq counters were dropped to stay
// within maxSessions.
func (m *Mapper) SeqEvictions() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seqs.evictions
}

// AppendTraces appends the events of every sandbox span in td to dst, start
// before finish, spans in order, and says what it skipped.
func (m *Mapper) AppendTraces(dst []auditevent.Event, td ptrace.Traces) ([]auditevent.Event, Stats) {
	var st Stats
	var ids idArena // one allocation per chunk of spans, not one per span
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				dst, _ = m.appendSpanCounted(dst, spans.At(k), &st, &ids)
			}
		}
	}
	return dst, st
}

// AppendSpanEvents appends the events of one span to dst: start then finish,
// or only one of them for a span AppendSpan marked incomplete or
// start-missing. For a span that is not a sandbox span it returns
// ErrNotSandboxSpan, for a malformed one an *AttrError; the returned slice
// then holds dst's events only (its backing array may have grown, and the
// spare slots after them may have been written and cleared). st, when not
// nil, is updated.
//
// The two events share their trace_id and parent_span_id strings; Clone an
// event before changing a field through its pointer.
func (m *Mapper) AppendSpanEvents(dst []auditevent.Event, span ptrace.Span, st *Stats) ([]auditevent.Event, error) {
	if st == nil {
		st = &Stats{}
	}
	return m.appendSpanCounted(dst, span, st, nil)
}

// appendSpanCounted is AppendSpanEvents with its span's id strings taken
// from ids (nil: an allocation of their own).
func (m *Mapper) appendSpanCounted(dst []auditevent.Event, span ptrace.Span, st *Stats, ids *idArena) ([]auditevent.Event, error) {
	st.Spans++
	n := len(dst)
	dst, err := m.appendSpanEvents(dst, span, st, ids)
	switch {
	case err == nil:
		st.Events += len(dst) - n
	case errors.Is(err, ErrNotSandboxSpan):
		st.NotSandbox++
	default:
		st.invalid(err)
	}
	return dst, err
}

// spanSeqs are the explicit seqs a span carries, if any.
type spanSeqs struct {
	start, finish       int64
	hasStart, hasFinish bool
}

// spanFields is what is read from a span's attributes besides the fields
// both events share, validated.
type spanFields struct {
	withStart, withFinish bool
	startData, finishData auditevent.Data
	seqs                  spanSeqs
}

// appendSpanEvents validates every field before touching the seq counters
// (so a bad span leaves no trace), then appends the span's events. They are
// built in place in dst: the shared fields are read into the first event's
// slot and the second is copied from it, since an Event is a few hundred
// bytes and each copy of one costs about a hundred instructions.
func (m *Mapper) appendSpanEvents(dst []auditevent.Event, span ptrace.Span, st *Stats, ids *idArena) ([]auditevent.Event, error) {
	as := attrSet{arena: ids, maxLine: m.maxLine}
	if !as.read(span) {
		return dst, ErrNotSandboxSpan
	}
	n := len(dst)
	// Room for both events first, so the pointers below stay valid.
	dst = append(slices.Grow(dst, 2), auditevent.Event{})
	var f spanFields
	if err := as.fields(span, &dst[n], &f); err != nil {
		return dropFrom(dst, n), err
	}
	if f.withStart && f.withFinish {
		dst = append(dst, dst[n])
	}
	var start, finish *auditevent.Event
	if f.withStart {
		start = &dst[n]
		if err := as.startEvent(start, f.startData, span, st); err != nil {
			return dropFrom(dst, n), err
		}
	}
	if f.withFinish {
		finish = &dst[len(dst)-1]
		if err := as.finishEvent(finish, f.finishData, span, st); err != nil {
			return dropFrom(dst, n), err
		}
	}
	if start != nil && finish != nil && start.EventID == finish.EventID {
		return dropFrom(dst, n), attrErr(semconv.AttrFinishID, "the same as "+semconv.AttrStartID+": two events cannot share an event_id", nil)
	}
	if err := m.assignSeqs(dst[n].SessionID, &f.seqs, start, finish); err != nil {
		return dropFrom(dst, n), err
	}
	return dst, nil
}

// dropFrom cuts dst back to n events, clearing the cut ones so the slice's
// spare capacity does not keep their strings alive.
func dropFrom(dst []auditevent.Event, n int) []auditevent.Event {
	clear(dst[n:])
	return dst[:n]
}

// fields reads the attributes in the order their errors are reported:
// identity, phase markers, ids, data, seqs, version; the fields both events
// share go into common.
func (as *attrSet) fields(span ptrace.Span, common *auditevent.Event, f *spanFields) error {
	var err error
	if err = as.identity(common); err != nil {
		return err
	}
	if f.withStart, f.withFinish, err = as.phases(); err != nil {
		return err
	}
	if err = as.ids(span, common); err != nil {
		return err
	}
	if f.startData, f.finishData, err = as.phaseData(); err != nil {
		return err
	}
	if f.seqs, err = as.seqs(); err != nil {
		return err
	}
	if common.Version, err = as.version(); err != nil {
		return err
	}
	return nil
}

// identity reads the operation and the session into e.
func (as *attrSet) identity(e *auditevent.Event) error {
	op, err := as.str(aOp)
	if err != nil {
		return err
	}
	if !auditevent.IsOp(op) {
		// Not quoted: errors reach logs and clients, and attribute values
		// never do (an op may hold anything a producer put there).
		return attrErr(semconv.AttrOperation, "not a sandbox operation (must be one of: "+strings.Join(auditevent.Ops(), ", ")+")", nil)
	}
	sessionText, err := as.str(aSession)
	if err != nil {
		return err
	}
	if e.SessionID, err = auditevent.ParseUUID(sessionText); err != nil {
		// The value is not quoted: session ids are never logged, and a
		// value that is not one may be anything (a path, a secret).
		return attrErr(semconv.AttrSessionID, "not a UUID ("+strconv.Itoa(len(sessionText))+" bytes)", nil)
	}
	e.Op = op
	return nil
}

// phases says which of the span's events exist, from the incomplete and
// start-missing markers.
func (as *attrSet) phases() (withStart, withFinish bool, err error) {
	incomplete, err := as.flag(aIncomplete)
	if err != nil {
		return false, false, err
	}
	startMissing, err := as.flag(aStartMissing)
	if err != nil {
		return false, false, err
	}
	if incomplete && startMissing {
		return false, false, attrErr(semconv.AttrIncomplete, "a span cannot lack both its start and its finish", nil)
	}
	return !startMissing, !incomplete, nil
}

// ids reads the id attributes into e, falling back to the span's own ids
// in hex.
func (as *attrSet) ids(span ptrace.Span, e *auditevent.Event) error {
	var err error
	traceSet, spanSet, parentSet := as.has[aEvTrace], as.has[aEvSpan], as.has[aEvParent]
	if traceSet {
		if e.TraceID, err = as.optStr(aEvTrace); err != nil {
			return err
		}
	}
	if parentSet {
		if e.ParentSpanID, err = as.optStr(aEvParent); err != nil {
			return err
		}
	}
	if spanSet {
		if e.SpanID, err = as.str(aEvSpan); err != nil {
			return err
		}
	}
	hexIDs := spanHexIDs(as.arena.next(), span, !traceSet, !spanSet, !parentSet)
	as.hexIDs = hexIDs
	if !spanSet {
		e.SpanID = hexIDs.spanID
	}
	if !traceSet && hexIDs.traceID != "" {
		e.TraceID = &hexIDs.traceID
	}
	if !parentSet && hexIDs.parentSpanID != "" {
		e.ParentSpanID = &hexIDs.parentSpanID
	}
	return nil
}

// version reads the event version; 1 when absent.
func (as *attrSet) version() (int64, error) {
	if !as.has[aVersion] {
		return 1, nil
	}
	if as.v[aVersion].Type() != pcommon.ValueTypeInt {
		return 0, as.typeErr(aVersion, "int")
	}
	return as.v[aVersion].Int(), nil
}

// phaseData reads the start data and the finish data, which defaults to the
// start data.
func (as *attrSet) phaseData() (start, finish auditevent.Data, err error) {
	if start, err = as.data(aStartData); err != nil {
		return start, finish, err
	}
	finish = start
	if as.has[aFinishData] {
		if finish, err = as.data(aFinishData); err != nil {
			return start, finish, err
		}
	}
	return start, finish, nil
}

// seqs reads the explicit seqs.
func (as *attrSet) seqs() (spanSeqs, error) {
	var s spanSeqs
	var err error
	if s.start, s.hasStart, err = as.seq(aStartSeq); err != nil {
		return s, err
	}
	if s.finish, s.hasFinish, err = as.seq(aFinishSeq); err != nil {
		return s, err
	}
	return s, nil
}

// startEvent completes e, a copy of the common fields, as the span's start
// event, without its seq.
func (as *attrSet) startEvent(e *auditevent.Event, data auditevent.Data, span ptrace.Span, st *Stats) error {
	e.Phase = auditevent.PhaseStart
	e.Data = data
	var err error
	if e.TS, err = as.ts(aStartTS, span.StartTimestamp(), fieldStartTime); err != nil {
		return err
	}
	e.EventID, err = as.eventID(aStartID, span.TraceID(), span.SpanID(), auditevent.PhaseStart, st)
	return err
}

// finishEvent completes e, a copy of the common fields, as the span's
// finish event, without its seq.
func (as *attrSet) finishEvent(e *auditevent.Event, data auditevent.Data, span ptrace.Span, st *Stats) error {
	e.Phase = auditevent.PhaseFinish
	e.Data = data
	var err error
	if e.TS, err = as.ts(aFinishTS, span.EndTimestamp(), fieldEndTime); err != nil {
		return err
	}
	if e.EventID, err = as.eventID(aFinishID, span.TraceID(), span.SpanID(), auditevent.PhaseFinish, st); err != nil {
		return err
	}
	return as.finishFields(e, span, st)
}

// assignSeqs gives the events (either may be nil) their seqs under one
// lock of the counters.
func (m *Mapper) assignSeqs(session uuid.UUID, seqs *spanSeqs, start, finish *auditevent.Event) error {
	// Unlocked without defer: this runs once per span, and nothing between
	// can panic but on a broken invariant.
	m.mu.Lock()
	e := m.seqs.touch(session)
	ok := true
	if start != nil {
		start.Seq, ok = m.seqs.seqOf(e, start.EventID, seqs.start, seqs.hasStart)
	}
	if finish != nil && ok {
		finish.Seq, ok = m.seqs.seqOf(e, finish.EventID, seqs.finish, seqs.hasFinish)
	}
	m.mu.Unlock()
	if !ok {
		return attrErr("span", "no seq left to assign: the session's highest seq is the largest int64", nil)
	}
	return nil
}

// finishFields fills ok, duration_ms, the error fields and exec output.
func (as *attrSet) finishFields(e *auditevent.Event, span ptrace.Span, st *Stats) error {
	status := span.Status()
	if as.has[aOK] {
		if as.v[aOK].Type() != pcommon.ValueTypeBool {
			return as.typeErr(aOK, "bool")
		}
		e.OK = as.v[aOK].Bool()
	} else {
		e.OK = status.Code() != ptrace.StatusCodeError
	}

	if as.has[aDuration] {
		v := as.v[aDuration]
		switch v.Type() {
		case pcommon.ValueTypeDouble:
			e.DurationMS = v.Double()
		case pcommon.ValueTypeInt:
			e.DurationMS = float64(v.Int())
		default:
			return as.typeErr(aDuration, "double")
		}
		if math.IsNaN(e.DurationMS) || math.IsInf(e.DurationMS, 0) {
			return attrErr(semconv.AttrDurationMS, "not a finite number", nil)
		}
	} else {
		start, end := span.StartTimestamp(), span.EndTimestamp()
		if err := checkSpanTime(start, fieldStartTime); err != nil {
			return err
		}
		if err := checkSpanTime(end, fieldEndTime); err != nil {
			return err
		}
		e.DurationMS = float64(int64(end)-int64(start)) / 1e6
	}

	var err error
	if e.ErrorType, err = as.optStr(aErrType); err != nil {
		return err
	}
	if e.ErrorMessage, err = as.optStr(aErrMsg); err != nil {
		return err
	}
	if !as.has[aErrMsg] && !e.OK && status.Message() != "" {
		msg := status.Message()
		e.ErrorMessage = &msg
	}
	if e.ErrorCode, err = as.optStr(aErrCode); err != nil {
		return err
	}
	if e.ErrorCode != nil && !auditevent.IsErrorCode(*e.ErrorCode) {
		st.ignored(attrErr(semconv.AttrErrorCode, "not a reference error code, dropped", nil))
		e.ErrorCode = nil
	}
	if as.has[aErrRetry] {
		switch v := as.v[aErrRetry]; v.Type() {
		case pcommon.ValueTypeBool:
			b := v.Bool()
			e.ErrorRetryable = &b
		case pcommon.ValueTypeEmpty:
		default:
			return as.typeErr(aErrRetry, "bool")
		}
	}

	e.StdoutBytes, e.Stdout = as.output(aStdoutBytes, aStdout, st)
	e.StderrBytes, e.Stderr = as.output(aStderrBytes, aStderr, st)
	return nil
}
