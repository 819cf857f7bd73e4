package spanmap

import (
	"encoding/hex"
	"errors"
	"math"
	"strconv"
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

// Mapper turns sandbox spans into audit events. It holds the per-session seq
// counters for spans that do not carry their seqs, so use one Mapper per
// pipeline component. It is safe for concurrent use.
type Mapper struct {
	mu   sync.Mutex
	seqs *seqCounters
}

// NewMapper returns a Mapper that keeps seq counters for at most maxSessions
// sessions (DefaultMaxSessions when maxSessions <= 0).
func NewMapper(maxSessions int) *Mapper {
	if maxSessions <= 0 {
		maxSessions = DefaultMaxSessions
	}
	return &Mapper{seqs: newSeqCounters(maxSessions)}
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
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				dst, _ = m.AppendSpanEvents(dst, spans.At(k), &st)
			}
		}
	}
	return dst, st
}

// AppendSpanEvents appends the events of one span to dst: start then finish,
// or only one of them for a span AppendSpan marked incomplete or
// start-missing. For a span that is not a sandbox span it returns
// ErrNotSandboxSpan, for a malformed one an *AttrError; dst is then returned
// unchanged. st, when not nil, is updated.
//
// The two events share their trace_id and parent_span_id strings; Clone an
// event before changing a field through its pointer.
func (m *Mapper) AppendSpanEvents(dst []auditevent.Event, span ptrace.Span, st *Stats) ([]auditevent.Event, error) {
	if st == nil {
		st = &Stats{}
	}
	st.Spans++
	n := len(dst)
	dst, err := m.appendSpanEvents(dst, span, st)
	switch {
	case errors.Is(err, ErrNotSandboxSpan):
		st.NotSandbox++
	case err != nil:
		st.invalid(err)
	default:
		st.Events += len(dst) - n
	}
	return dst, err
}

// attribute slots, filled in one pass over the span's attributes.
const (
	aOp = iota
	aSession
	aStartSeq
	aFinishSeq
	aStartID
	aFinishID
	aStartData
	aFinishData
	aOK
	aDuration
	aErrType
	aErrCode
	aErrMsg
	aErrRetry
	aStdoutBytes
	aStderrBytes
	aEvTrace
	aEvSpan
	aEvParent
	aStartTS
	aFinishTS
	aStdout
	aStderr
	aIncomplete
	aStartMissing
	aVersion
	nAttrs
)

type attrSet struct {
	v   [nAttrs]pcommon.Value
	has [nAttrs]bool
}

func slotOf(key string) int {
	switch key {
	case semconv.AttrOperation:
		return aOp
	case semconv.AttrSessionID:
		return aSession
	case semconv.AttrStartSeq:
		return aStartSeq
	case semconv.AttrFinishSeq:
		return aFinishSeq
	case semconv.AttrStartID:
		return aStartID
	case semconv.AttrFinishID:
		return aFinishID
	case semconv.AttrStartData:
		return aStartData
	case semconv.AttrFinishData:
		return aFinishData
	case semconv.AttrOK:
		return aOK
	case semconv.AttrDurationMS:
		return aDuration
	case semconv.AttrErrorType:
		return aErrType
	case semconv.AttrErrorCode:
		return aErrCode
	case semconv.AttrErrorMessage:
		return aErrMsg
	case semconv.AttrErrorRetryable:
		return aErrRetry
	case semconv.AttrExecStdoutBytes:
		return aStdoutBytes
	case semconv.AttrExecStderrBytes:
		return aStderrBytes
	case semconv.AttrEventTraceID:
		return aEvTrace
	case semconv.AttrEventSpanID:
		return aEvSpan
	case semconv.AttrEventParentSpanID:
		return aEvParent
	case semconv.AttrStartTS:
		return aStartTS
	case semconv.AttrFinishTS:
		return aFinishTS
	case semconv.AttrExecStdout:
		return aStdout
	case semconv.AttrExecStderr:
		return aStderr
	case semconv.AttrIncomplete:
		return aIncomplete
	case semconv.AttrStartMissing:
		return aStartMissing
	case semconv.AttrEventVersion:
		return aVersion
	}
	return -1
}

var attrNames = [nAttrs]string{
	aOp: semconv.AttrOperation, aSession: semconv.AttrSessionID, aStartSeq: semconv.AttrStartSeq,
	aFinishSeq: semconv.AttrFinishSeq, aStartID: semconv.AttrStartID, aFinishID: semconv.AttrFinishID,
	aStartData: semconv.AttrStartData, aFinishData: semconv.AttrFinishData, aOK: semconv.AttrOK,
	aDuration: semconv.AttrDurationMS, aErrType: semconv.AttrErrorType, aErrCode: semconv.AttrErrorCode,
	aErrMsg: semconv.AttrErrorMessage, aErrRetry: semconv.AttrErrorRetryable,
	aStdoutBytes: semconv.AttrExecStdoutBytes, aStderrBytes: semconv.AttrExecStderrBytes,
	aEvTrace: semconv.AttrEventTraceID, aEvSpan: semconv.AttrEventSpanID,
	aEvParent: semconv.AttrEventParentSpanID, aStartTS: semconv.AttrStartTS, aFinishTS: semconv.AttrFinishTS,
	aStdout: semconv.AttrExecStdout, aStderr: semconv.AttrExecStderr, aIncomplete: semconv.AttrIncomplete,
	aStartMissing: semconv.AttrStartMissing, aVersion: semconv.AttrEventVersion,
}

// spanStrings backs the id strings both events of a span point at, so a
// span costs one allocation for them instead of one per pointer.
type spanStrings struct {
	traceID, parentSpanID string
}

func (m *Mapper) appendSpanEvents(dst []auditevent.Event, span ptrace.Span, st *Stats) ([]auditevent.Event, error) {
	var as attrSet
	for k, v := range span.Attributes().All() {
		if i := slotOf(k); i >= 0 {
			as.v[i], as.has[i] = v, true
		}
	}
	if !as.has[aOp] || !as.has[aSession] {
		return dst, ErrNotSandboxSpan
	}

	op, err := as.str(aOp)
	if err != nil {
		return dst, err
	}
	if !auditevent.IsOp(op) {
		return dst, attrErr(semconv.AttrOperation, "not a sandbox operation: "+quoteShort(op), nil)
	}
	sessionText, err := as.str(aSession)
	if err != nil {
		return dst, err
	}
	session, err := auditevent.ParseUUID(sessionText)
	if err != nil {
		return dst, attrErr(semconv.AttrSessionID, "not a UUID: "+quoteShort(sessionText), nil)
	}

	incomplete, err := as.flag(aIncomplete)
	if err != nil {
		return dst, err
	}
	startMissing, err := as.flag(aStartMissing)
	if err != nil {
		return dst, err
	}
	if incomplete && startMissing {
		return dst, attrErr(semconv.AttrIncomplete, "a span cannot lack both its start and its finish", nil)
	}
	withStart, withFinish := !startMissing, !incomplete

	// Ids.
	var ids spanStrings
	traceID, spanID := span.TraceID(), span.SpanID()
	var tracePtr, parentPtr *string
	var spanIDText string
	traceSet, parentSet := false, false
	if as.has[aEvTrace] {
		if tracePtr, err = as.optStr(aEvTrace); err != nil {
			return dst, err
		}
		traceSet = true
	}
	if as.has[aEvParent] {
		if parentPtr, err = as.optStr(aEvParent); err != nil {
			return dst, err
		}
		parentSet = true
	}
	if as.has[aEvSpan] {
		if spanIDText, err = as.str(aEvSpan); err != nil {
			return dst, err
		}
	}
	{
		// One backing string for every hex id this span needs.
		var buf [32 + 16 + 16]byte
		n := 0
		tOff, sOff, pOff := -1, -1, -1
		if !traceSet && !traceID.IsEmpty() {
			tOff = n
			n += hex.Encode(buf[n:], traceID[:])
		}
		if !as.has[aEvSpan] {
			sOff = n
			n += hex.Encode(buf[n:], spanID[:])
		}
		parent := span.ParentSpanID()
		if !parentSet && !parent.IsEmpty() {
			pOff = n
			n += hex.Encode(buf[n:], parent[:])
		}
		all := string(buf[:n])
		if tOff >= 0 {
			ids.traceID = all[tOff : tOff+32]
		}
		if sOff >= 0 {
			spanIDText = all[sOff : sOff+16]
		}
		if pOff >= 0 {
			ids.parentSpanID = all[pOff : pOff+16]
		}
	}
	if !traceSet && ids.traceID != "" {
		tracePtr = &ids.traceID
	}
	if !parentSet && ids.parentSpanID != "" {
		parentPtr = &ids.parentSpanID
	}

	// Data.
	var startData, finishData auditevent.Data
	if startData, err = as.data(aStartData); err != nil {
		return dst, err
	}
	finishData = startData
	if as.has[aFinishData] {
		if finishData, err = as.data(aFinishData); err != nil {
			return dst, err
		}
	}

	// Seqs: parsed before the counters are touched, so a bad span leaves no trace.
	startSeq, hasStartSeq, err := as.seq(aStartSeq)
	if err != nil {
		return dst, err
	}
	finishSeq, hasFinishSeq, err := as.seq(aFinishSeq)
	if err != nil {
		return dst, err
	}

	version := int64(1)
	if as.has[aVersion] {
		if as.v[aVersion].Type() != pcommon.ValueTypeInt {
			return dst, as.typeErr(aVersion, "int")
		}
		version = as.v[aVersion].Int()
	}

	common := auditevent.Event{
		Version:      version,
		SessionID:    session,
		Op:           op,
		SpanID:       spanIDText,
		ParentSpanID: parentPtr,
		TraceID:      tracePtr,
	}

	var start, finish auditevent.Event
	if withStart {
		start = common
		start.Phase = auditevent.PhaseStart
		start.Data = startData
		if start.TS, err = as.ts(aStartTS, span.StartTimestamp()); err != nil {
			return dst, err
		}
		start.EventID = as.eventID(aStartID, traceID, spanID, auditevent.PhaseStart, st)
	}
	if withFinish {
		finish = common
		finish.Phase = auditevent.PhaseFinish
		finish.Data = finishData
		if finish.TS, err = as.ts(aFinishTS, span.EndTimestamp()); err != nil {
			return dst, err
		}
		finish.EventID = as.eventID(aFinishID, traceID, spanID, auditevent.PhaseFinish, st)
		if err = as.finishFields(&finish, span, st); err != nil {
			return dst, err
		}
	}

	m.mu.Lock()
	e := m.seqs.touch(session)
	if withStart {
		start.Seq = e.seq(startSeq, hasStartSeq)
	}
	if withFinish {
		finish.Seq = e.seq(finishSeq, hasFinishSeq)
	}
	m.mu.Unlock()

	if withStart {
		dst = append(dst, start)
	}
	if withFinish {
		dst = append(dst, finish)
	}
	return dst, nil
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
		st.ignored(attrErr(semconv.AttrErrorCode, "not a reference error code, dropped: "+quoteShort(*e.ErrorCode), nil))
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

	e.StdoutBytes = as.output(aStdoutBytes, st)
	e.StderrBytes = as.output(aStderrBytes, st)
	e.Stdout = as.outputText(aStdout, st)
	e.Stderr = as.outputText(aStderr, st)
	return nil
}

func (as *attrSet) typeErr(i int, want string) error {
	return attrErr(attrNames[i], "want "+want+", got "+as.v[i].Type().String(), nil)
}

// str reads a required string attribute.
func (as *attrSet) str(i int) (string, error) {
	if as.v[i].Type() != pcommon.ValueTypeStr {
		return "", as.typeErr(i, "string")
	}
	return as.v[i].Str(), nil
}

// optStr reads an optional string attribute; absent or empty-valued is nil.
func (as *attrSet) optStr(i int) (*string, error) {
	if !as.has[i] {
		return nil, nil
	}
	switch as.v[i].Type() {
	case pcommon.ValueTypeStr:
		s := as.v[i].Str()
		return &s, nil
	case pcommon.ValueTypeEmpty:
		return nil, nil
	}
	return nil, as.typeErr(i, "string")
}

// flag reads an optional bool marker attribute.
func (as *attrSet) flag(i int) (bool, error) {
	if !as.has[i] {
		return false, nil
	}
	if as.v[i].Type() != pcommon.ValueTypeBool {
		return false, as.typeErr(i, "bool")
	}
	return as.v[i].Bool(), nil
}

func (as *attrSet) data(i int) (auditevent.Data, error) {
	if !as.has[i] {
		return auditevent.Data{}, nil
	}
	s, err := as.str(i)
	if err != nil {
		return auditevent.Data{}, err
	}
	if s == "{}" {
		return auditevent.Data{}, nil
	}
	d, err := auditevent.ParseData([]byte(s))
	if err != nil {
		return auditevent.Data{}, attrErr(attrNames[i], "not JSON object text", err)
	}
	return d, nil
}

// seq reads an int attribute; a double holding an integer is accepted too.
func (as *attrSet) seq(i int) (int64, bool, error) {
	if !as.has[i] {
		return 0, false, nil
	}
	switch v := as.v[i]; v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), true, nil
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
			return int64(f), true, nil
		}
		return 0, false, attrErr(attrNames[i], "not an integer", nil)
	}
	return 0, false, as.typeErr(i, "int")
}

// ts is the span time, or the extension attribute's exact spelling.
func (as *attrSet) ts(i int, t pcommon.Timestamp) (auditevent.Timestamp, error) {
	if !as.has[i] {
		return auditevent.TimestampFromTime(t.AsTime()), nil
	}
	s, err := as.str(i)
	if err != nil {
		return auditevent.Timestamp{}, err
	}
	ts, err := auditevent.ParseTimestamp(s)
	if err != nil {
		return auditevent.Timestamp{}, attrErr(attrNames[i], "not a timestamp", err)
	}
	return ts, nil
}

func (as *attrSet) eventID(i int, traceID pcommon.TraceID, spanID pcommon.SpanID, phase auditevent.Phase, st *Stats) uuid.UUID {
	if as.has[i] {
		if v := as.v[i]; v.Type() == pcommon.ValueTypeStr {
			if id, err := auditevent.ParseUUID(v.Str()); err == nil {
				return id
			}
		}
		st.ignored(attrErr(attrNames[i], "not a UUID string, derived instead", nil))
	}
	return DeriveEventID(traceID, spanID, phase)
}

// output reads raw exec output; a malformed value is dropped and counted.
func (as *attrSet) output(i int, st *Stats) []byte {
	if !as.has[i] {
		return nil
	}
	b, err := DecodeExecOutput(as.v[i])
	if err != nil {
		st.ignored(attrErr(attrNames[i], "output dropped", err))
		return nil
	}
	return b
}

func (as *attrSet) outputText(i int, st *Stats) *string {
	s, err := as.optStr(i)
	if err != nil {
		st.ignored(err)
		return nil
	}
	return s
}

// quoteShort quotes a value for an error message, cut to keep logs sane.
func quoteShort(s string) string {
	const maxLen = 64
	if len(s) > maxLen {
		return strconv.Quote(s[:maxLen]) + "…"
	}
	return strconv.Quote(s)
}
