package spanmap

import (
	"errors"
	"fmt"
	"math"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

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
	v     [nAttrs]pcommon.Value
	has   [nAttrs]bool
	arena *idArena // where the span's hex id strings go (nil: allocated alone)
	// maxLine bounds the canonical text of a data attribute (0: none).
	maxLine int
	// derived encodes the span's ids once for both derived event ids
	// (hasDerived: encoded).
	derived    derivedIDs
	hasDerived bool
	// hexIDs is the span's own ids in hex that ids wrote (nil before).
	hexIDs *spanStrings
}

// attrNames is the one table of slot names; slotOf is derived from it, so a
// new attribute is one slot constant and one entry here.
var attrNames = [nAttrs]string{
	aOp:           semconv.AttrOperation,
	aSession:      semconv.AttrSessionID,
	aStartSeq:     semconv.AttrStartSeq,
	aFinishSeq:    semconv.AttrFinishSeq,
	aStartID:      semconv.AttrStartID,
	aFinishID:     semconv.AttrFinishID,
	aStartData:    semconv.AttrStartData,
	aFinishData:   semconv.AttrFinishData,
	aOK:           semconv.AttrOK,
	aDuration:     semconv.AttrDurationMS,
	aErrType:      semconv.AttrErrorType,
	aErrCode:      semconv.AttrErrorCode,
	aErrMsg:       semconv.AttrErrorMessage,
	aErrRetry:     semconv.AttrErrorRetryable,
	aStdoutBytes:  semconv.AttrExecStdoutBytes,
	aStderrBytes:  semconv.AttrExecStderrBytes,
	aEvTrace:      semconv.AttrEventTraceID,
	aEvSpan:       semconv.AttrEventSpanID,
	aEvParent:     semconv.AttrEventParentSpanID,
	aStartTS:      semconv.AttrStartTS,
	aFinishTS:     semconv.AttrFinishTS,
	aStdout:       semconv.AttrExecStdout,
	aStderr:       semconv.AttrExecStderr,
	aIncomplete:   semconv.AttrIncomplete,
	aStartMissing: semconv.AttrStartMissing,
	aVersion:      semconv.AttrEventVersion,
}

// slotIndex finds a key's slot with two byte looks and one comparison:
// for each key length n, the names of that length all differ in
// pick(name, at[n]), and slot[n][pick] is 1 + the slot of the name of
// length n with that pick (0: none). Built from attrNames. A scan of every
// name cost a tenth of the mapping, and a compare with each name of the
// key's length a twentieth (BenchmarkAppendTracesSandboxtrace).
type slotIndex struct {
	at   [][2]int
	slot [][256]int8
}

// pick mixes two bytes of a name into one.
func pick(name string, at [2]int) byte { return name[at[0]] + 3*name[at[1]] }

var slots = func() slotIndex {
	var x slotIndex
	byLen := map[int][]int{}
	maxLen := 0
	for i, name := range attrNames {
		byLen[len(name)] = append(byLen[len(name)], i)
		maxLen = max(maxLen, len(name))
	}
	x.at = make([][2]int, maxLen+1)
	x.slot = make([][256]int8, maxLen+1)
	for n, names := range byLen {
		x.at[n] = distinctPick(names, n)
		for _, i := range names {
			x.slot[n][pick(attrNames[i], x.at[n])] = int8(i + 1)
		}
	}
	return x
}()

// distinctPick is a pair of byte positions, from the end (where names of
// the same length differ), whose pick differs for every name of slots.
func distinctPick(slots []int, n int) [2]int {
	for p := n - 1; p >= 0; p-- {
		for q := n - 1; q >= p; q-- {
			var seen [256]bool
			ok := true
			for _, i := range slots {
				c := pick(attrNames[i], [2]int{p, q})
				ok = ok && !seen[c]
				seen[c] = true
			}
			if ok {
				return [2]int{p, q}
			}
		}
	}
	panic("spanmap: two attribute names of the same length differ nowhere")
}

func slotOf(key string) int {
	if len(key) == 0 || len(key) >= len(slots.at) {
		return -1 // no name is empty; a length without names picks bytes 0 and 0
	}
	i := int(slots.slot[len(key)][pick(key, slots.at[len(key)])]) - 1
	if i < 0 || attrNames[i] != key {
		return -1
	}
	return i
}

// read fills the slots in one pass over the span's attributes; it returns
// false for a span without the operation and session attributes.
func (as *attrSet) read(span ptrace.Span) bool {
	for k, v := range span.Attributes().All() {
		if i := slotOf(k); i >= 0 {
			as.v[i], as.has[i] = v, true
		}
	}
	return as.has[aOp] && as.has[aSession]
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
	d, err := auditevent.ParseDataStringLimit(s, as.maxLine)
	if err == nil {
		return d, nil
	}
	if tl, ok := errors.AsType[*auditevent.TooLongError](err); ok {
		return auditevent.Data{}, attrErr(attrNames[i], "too large", tl)
	}
	if de, ok := errors.AsType[*auditevent.DepthError](err); ok {
		return auditevent.Data{}, attrErr(attrNames[i], de.Error(), nil)
	}
	return auditevent.Data{}, attrErr(attrNames[i], "not JSON object text", err)
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

// ts is the span time (field names it), or the extension attribute's exact
// spelling.
func (as *attrSet) ts(i int, t pcommon.Timestamp, field string) (auditevent.Timestamp, error) {
	if !as.has[i] {
		if err := checkSpanTime(t, field); err != nil {
			return auditevent.Timestamp{}, err
		}
		return auditevent.TimestampFromUnixNano(int64(t)), nil // checkSpanTime: within int64
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

// eventID is the event id attribute i, or the one derived from the span's
// ids. An all-zero span id (invalid in OTLP) names no span: every such
// span of a trace would derive the same event ids and all but the first
// would be dropped as duplicates, so deriving from one is refused. An
// all-zero trace id alone is null trace_id; the span id still tells spans
// apart.
func (as *attrSet) eventID(i int, traceID pcommon.TraceID, spanID pcommon.SpanID, phase auditevent.Phase, st *Stats) (uuid.UUID, error) {
	if as.has[i] {
		if v := as.v[i]; v.Type() == pcommon.ValueTypeStr {
			if id, err := auditevent.ParseUUID(v.Str()); err == nil {
				return id, nil
			}
		}
		st.ignored(attrErr(attrNames[i], "not a UUID string, derived instead", nil))
	}
	if spanID.IsEmpty() {
		return uuid.Nil, attrErr("span", "span_id is all zero, so "+attrNames[i]+
			" cannot be derived from it: give the span an id or set the attribute", nil)
	}
	if !as.hasDerived {
		as.derived.setHex(traceID, spanID, as.hexIDs)
		as.hasDerived = true
	}
	return as.derived.id(phase), nil
}

// output reads a stream's raw exec output (slot raw) and its decoded text
// (slot text). A malformed value is dropped and counted; malformed raw
// output drops the text too, which the raw bytes were sent to replace, so
// no output is written that the producer's bytes did not give (the
// sandboxaudit processor drops both alike).
func (as *attrSet) output(raw, text int, st *Stats) ([]byte, *string) {
	var b []byte
	if as.has[raw] {
		var err error
		if b, err = DecodeExecOutput(as.v[raw]); err != nil {
			st.ignored(attrErr(attrNames[raw], "output dropped", err))
			return nil, nil
		}
	}
	s, err := as.optStr(text)
	if err != nil {
		st.ignored(err)
		return b, nil
	}
	return b, s
}

// Span time fields, as OTLP names them.
const (
	fieldStartTime = "start_time_unix_nano"
	fieldEndTime   = "end_time_unix_nano"
)

// checkSpanTime refuses a span time past the largest int64 nanosecond count
// (2262-04-11): OTLP carries an unsigned 64-bit count, and pcommon's AsTime
// would wrap it to a time before 1970, a wrong instant written as if right.
func checkSpanTime(t pcommon.Timestamp, field string) error {
	if uint64(t) > math.MaxInt64 {
		return attrErr("span", fmt.Sprintf("%s: %d ns is after 2262-04-11, the latest time an event can hold", field, uint64(t)), nil)
	}
	return nil
}
