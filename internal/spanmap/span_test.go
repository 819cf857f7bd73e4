package spanmap

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/conformance"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

func decodeLine(t testing.TB, line string) auditevent.Event {
	t.Helper()
	e, err := auditevent.Decode([]byte(line))
	require.NoError(t, err, line)
	return e
}

const startLine = `{"data":{"cmd":"ls"},"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","op":"exec","parent_span_id":"b7ad6b7169203331","phase":"start","seq":1,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T15:09:26.535897Z","version":1}`

const finishLine = `{"data":{"cmd":"ls"},"duration_ms":250.125,"error_code":"exec_nonzero","error_message":"exit 2","error_retryable":false,"error_type":"ExecNonZeroError","event_id":"1b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ok":false,"op":"exec","parent_span_id":"b7ad6b7169203331","phase":"finish","seq":2,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","stderr":null,"stdout":null,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T15:09:26.786022Z","version":1}`

func TestAppendSpanOTelIDs(t *testing.T) {
	start, finish := decodeLine(t, startLine), decodeLine(t, finishLine)
	spans := ptrace.NewSpanSlice()
	span := AppendSpan(spans, &start, &finish)

	assert.Equal(t, 1, spans.Len())
	assert.Equal(t, "sandbox.exec", span.Name())
	assert.Equal(t, ptrace.SpanKindInternal, span.Kind())
	assert.Equal(t, traceHex, span.TraceID().String())
	assert.Equal(t, spanHex, span.SpanID().String())
	assert.Equal(t, parentHex, span.ParentSpanID().String())
	assert.Equal(t, time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC), span.StartTimestamp().AsTime())
	assert.Equal(t, time.Date(2026, 3, 14, 15, 9, 26, 786022000, time.UTC), span.EndTimestamp().AsTime())
	assert.Equal(t, ptrace.StatusCodeError, span.Status().Code())
	assert.Equal(t, "exit 2", span.Status().Message())

	raw := span.Attributes().AsRaw()
	assert.Equal(t, map[string]any{
		semconv.AttrOperation:      "exec",
		semconv.AttrSessionID:      sessionA,
		semconv.AttrStartID:        "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e",
		semconv.AttrFinishID:       "1b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e",
		semconv.AttrStartSeq:       int64(1),
		semconv.AttrFinishSeq:      int64(2),
		semconv.AttrStartData:      `{"cmd":"ls"}`, // finish_data left out: same as start
		semconv.AttrOK:             false,
		semconv.AttrDurationMS:     250.125,
		semconv.AttrErrorType:      "ExecNonZeroError",
		semconv.AttrErrorCode:      "exec_nonzero",
		semconv.AttrErrorMessage:   "exit 2",
		semconv.AttrErrorRetryable: false,
	}, raw, "OTel ids need no extension attributes")

	evs := mapOne(t, NewMapper(0), span)
	assert.Equal(t, []string{startLine + "\n", finishLine + "\n"}, lines(evs))
}

func TestAppendSpanDerivedIDs(t *testing.T) {
	const pySpan = "sandbox_op_0af7651916cd43dd8448eb211c80319c"
	start := decodeLine(t, `{"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","op":"read","phase":"start","seq":7,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"`+pySpan+`","parent_span_id":"sandbox_op_parent","trace_id":null,"ts":"2026-03-14T15:09:26Z"}`)
	span := AppendSpan(ptrace.NewSpanSlice(), &start, nil)

	// One session is one trace: the session UUID's bytes.
	assert.Equal(t, "6f1c2a8e3b4d4e5f9a0b1c2d3e4f5a6b", span.TraceID().String())
	// First 8 bytes of uuid5(namespace, "<session>/<span_id>"), computed with Python.
	assert.Equal(t, "1fd6d7e224045c65", span.SpanID().String())
	ns := uuid.MustParse("d5522618-d9a4-5682-af63-f0e537900855")
	parent := uuid.NewSHA1(ns, []byte(sessionA+"/sandbox_op_parent"))
	assert.Equal(t, hex.EncodeToString(parent[:8]), span.ParentSpanID().String())
	// The parent's own span gets the same id, so the trace links up.
	parentStart := start
	parentStart.SpanID = "sandbox_op_parent"
	parentStart.ParentSpanID = nil
	assert.Equal(t, span.ParentSpanID(), AppendSpan(ptrace.NewSpanSlice(), &parentStart, nil).SpanID())

	v, ok := span.Attributes().Get(semconv.AttrEventTraceID)
	require.True(t, ok)
	assert.Equal(t, pcommon.ValueTypeEmpty, v.Type(), "null trace_id")
	v, _ = span.Attributes().Get(semconv.AttrEventSpanID)
	assert.Equal(t, pySpan, v.Str())
	v, _ = span.Attributes().Get(semconv.AttrEventParentSpanID)
	assert.Equal(t, "sandbox_op_parent", v.Str())

	// Incomplete: ends at its start, status unset, maps back to the start only.
	assert.Equal(t, span.StartTimestamp(), span.EndTimestamp())
	assert.Equal(t, ptrace.StatusCodeUnset, span.Status().Code())
	v, _ = span.Attributes().Get(semconv.AttrIncomplete)
	assert.True(t, v.Bool())
	evs := mapOne(t, NewMapper(0), span)
	assert.Equal(t, []string{string(auditevent.Line(&start))}, lines(evs))
}

func TestAppendSpanIDSpellingsKept(t *testing.T) {
	start := decodeLine(t, startLine)
	start.TraceID = auditevent.Ptr("4BF92F3577B34DA6A3CE929D0E0E4736")
	start.SpanID = "00F067AA0BA902B7"
	start.ParentSpanID = auditevent.Ptr("")
	span := AppendSpan(ptrace.NewSpanSlice(), &start, nil)
	assert.Equal(t, traceHex, span.TraceID().String())
	assert.Equal(t, spanHex, span.SpanID().String())
	assert.True(t, span.ParentSpanID().IsEmpty())
	evs := mapOne(t, NewMapper(0), span)
	assert.Equal(t, []string{string(auditevent.Line(&start))}, lines(evs))
	assert.Contains(t, lines(evs)[0], `"parent_span_id":"","phase"`)
}

func TestAppendSpanFinishOnly(t *testing.T) {
	finish := decodeLine(t, finishLine)
	finish.StdoutBytes = []byte("out")
	finish.Stderr = auditevent.Ptr("already decoded")
	span := AppendSpan(ptrace.NewSpanSlice(), nil, &finish)
	end := time.Date(2026, 3, 14, 15, 9, 26, 786022000, time.UTC)
	assert.Equal(t, end, span.EndTimestamp().AsTime())
	assert.Equal(t, end.Add(-250125*time.Microsecond), span.StartTimestamp().AsTime())
	v, _ := span.Attributes().Get(semconv.AttrStartMissing)
	assert.True(t, v.Bool())
	v, _ = span.Attributes().Get(semconv.AttrFinishData)
	assert.Equal(t, `{"cmd":"ls"}`, v.Str())

	evs := mapOne(t, NewMapper(0), span)
	require.Len(t, evs, 1)
	assert.Equal(t, string(auditevent.Line(&finish)), lines(evs)[0])
	assert.Equal(t, []byte("out"), evs[0].StdoutBytes)
	assert.Nil(t, evs[0].StderrBytes)
}

func TestAppendSpanTimesSpansCannotHold(t *testing.T) {
	for _, ts := range []string{
		"2026-03-14T20:39:26.535897+05:30",
		"2026-03-14T15:09:26.535897", // naive
		"1969-12-31T23:59:59.999999Z",
		"9999-12-31T23:59:59.999999Z",
	} {
		t.Run(ts, func(t *testing.T) {
			start := decodeLine(t, startLine)
			var err error
			start.TS, err = auditevent.ParseTimestamp(ts)
			require.NoError(t, err)
			span := AppendSpan(ptrace.NewSpanSlice(), &start, nil)
			v, ok := span.Attributes().Get(semconv.AttrStartTS)
			require.True(t, ok)
			assert.Equal(t, ts, v.Str())
			evs := mapOne(t, NewMapper(0), span)
			assert.Equal(t, string(auditevent.Line(&start)), lines(evs)[0])
		})
	}
	start := decodeLine(t, startLine)
	start.TS, _ = auditevent.ParseTimestamp("2026-03-14T20:39:26.535897+05:30")
	span := AppendSpan(ptrace.NewSpanSlice(), &start, nil)
	assert.Equal(t, time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC), span.StartTimestamp().AsTime(), "same instant")
}

func TestAppendSpanBothNilPanics(t *testing.T) {
	assert.Panics(t, func() { AppendSpan(ptrace.NewSpanSlice(), nil, nil) })
}

// TestRoundTripRandomEvents is the property test: for random valid events
// (decoded from their canonical lines), AppendSpan then AppendSpanEvents,
// across the OTLP wire (protobuf and JSON), gives back the same lines and
// the same raw output bytes.
func TestRoundTripRandomEvents(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		start, finish := randomPair(t, r)
		var want []auditevent.Event
		if start != nil {
			want = append(want, *start)
		}
		if finish != nil {
			want = append(want, *finish)
		}
		checkRoundTrip(t, fmt.Sprint("case ", i), start, finish, want)
	}
}

// TestRoundTripConformanceVectors sends every valid event of the shared
// vectors through a one-event span.
func TestRoundTripConformanceVectors(t *testing.T) {
	vectors, err := conformance.LoadAll()
	require.NoError(t, err)
	n := 0
	for _, v := range vectors {
		if v.Kind != "encode" {
			continue
		}
		e, err := auditevent.Decode([]byte(v.Input))
		if err != nil {
			continue // encode vectors may rely on defaults the decoder fills
		}
		want, err := v.ExpectString()
		require.NoError(t, err)
		require.Equal(t, want, string(auditevent.Line(&e)), v.Source)
		if e.IsFinish() {
			checkRoundTrip(t, v.Name, nil, &e, []auditevent.Event{e})
		} else {
			checkRoundTrip(t, v.Name, &e, nil, []auditevent.Event{e})
		}
		n++
	}
	require.Greater(t, n, 50, "the vectors should give plenty of events")
}

func checkRoundTrip(t *testing.T, name string, start, finish *auditevent.Event, want []auditevent.Event) {
	t.Helper()
	td := ptrace.NewTraces()
	AppendSpan(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans(), start, finish)

	for wire, rt := range map[string]func(ptrace.Traces) ptrace.Traces{
		"pdata": func(td ptrace.Traces) ptrace.Traces { return td },
		"proto": func(td ptrace.Traces) ptrace.Traces {
			b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
			require.NoError(t, err)
			out, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
			require.NoError(t, err)
			return out
		},
		"json": func(td ptrace.Traces) ptrace.Traces {
			b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
			require.NoError(t, err)
			out, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
			require.NoError(t, err)
			return out
		},
	} {
		got, st := NewMapper(0).AppendTraces(nil, rt(td))
		require.Zero(t, st.Invalid+st.Ignored+st.NotSandbox, "%s via %s: %+v", name, wire, st)
		require.Equal(t, lines(want), lines(got), "%s via %s", name, wire)
		for j := range want {
			require.Equal(t, want[j].StdoutBytes, got[j].StdoutBytes, "%s via %s stdout bytes", name, wire)
			require.Equal(t, want[j].StderrBytes, got[j].StderrBytes, "%s via %s stderr bytes", name, wire)
		}
	}
}

var (
	dataPool = []string{
		`{}`, `{"a":1}`, `{"bytes":1180591620717411303424,"path":"/w/x"}`,
		`{"n":null,"f":1e-05,"g":1e16,"h":-0.0,"i":-0}`, `{"s":"\u00e9\ud83d\ude00\n\t\"<>&'"}`,
		`{"nested":{"z":[1,{"b":2,"a":[]}],"a":{}},"t":true,"u":false}`, `{"timeout_s":30.0,"argv":["sh","-lc","echo hi"]}`,
	}
	tsPool = []string{
		"2026-03-14T15:09:26.535897Z", "2026-03-14T15:09:26Z", "2026-03-14T20:39:26.5+05:30",
		"2026-03-14T15:09:26.000001-08:00", "2026-03-14T15:09:26", "1969-07-20T20:17:40Z", "9999-12-31T23:59:59.999999Z",
		"1970-01-01T00:00:00Z",
	}
	strPool = []string{"", "x", "exit status 2", "caf\u00e9 \U0001F600", "line\nbreak"}
)

func randomPair(t testing.TB, r *rand.Rand) (start, finish *auditevent.Event) {
	var sess uuid.UUID
	if r.IntN(20) != 0 { // sometimes the nil UUID
		for i := range sess {
			sess[i] = byte(r.Uint32())
		}
	}
	randHex := func(n int, upper bool) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		s := hex.EncodeToString(b)
		if upper {
			s = fmt.Sprintf("%X", b)
		}
		return s
	}
	spanID := []func() string{
		func() string { return randHex(8, false) },
		func() string { return randHex(8, true) },
		func() string { return "sandbox_op_" + randHex(16, false) },
		func() string { return "" },
		func() string { return "0000000000000000" },
		func() string { return "sp\u00e4n-" + randHex(2, false) },
	}
	optID := func(n int) *string {
		switch r.IntN(5) {
		case 0:
			return nil
		case 1:
			return auditevent.Ptr(randHex(n, r.IntN(2) == 0))
		case 2:
			return auditevent.Ptr(spanID[r.IntN(len(spanID))]())
		case 3:
			return auditevent.Ptr(randHex(n, false))
		}
		return auditevent.Ptr(hex.EncodeToString(make([]byte, n))) // all zero
	}
	optStr := func() *string {
		if r.IntN(2) == 0 {
			return nil
		}
		return auditevent.Ptr(strPool[r.IntN(len(strPool))])
	}
	optBytes := func() []byte {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	ts := func() string {
		if r.IntN(3) == 0 {
			return tsPool[r.IntN(len(tsPool))]
		}
		us := r.Int64N(4102444800_000000) // 1970..2100
		return auditevent.TimestampFromTime(time.UnixMicro(us)).String()
	}
	ops := auditevent.Ops()
	codes := auditevent.ErrorCodes()
	common := fmt.Sprintf(`"session_id":%q,"op":%q,"span_id":%q,"trace_id":%s,"parent_span_id":%s`,
		sess, ops[r.IntN(len(ops))], spanID[r.IntN(len(spanID))](), jsonStr(optID(16)), jsonStr(optID(8)))
	seq := func() int64 {
		if r.IntN(4) == 0 {
			return r.Int64() - r.Int64()
		}
		return r.Int64N(1000)
	}

	shape := r.IntN(10)
	if shape < 8 {
		line := fmt.Sprintf(`{"version":1,"event_id":%q,"ts":%q,"seq":%d,"phase":"start","data":%s,%s}`,
			uuid.UUID(randBytes16(r)), ts(), seq(), dataPool[r.IntN(len(dataPool))], common)
		e := decodeLine(t, line)
		start = &e
	}
	if shape != 7 {
		durations := []float64{0, 1.5, 3, 1e-05, 1e16, 250.125, r.Float64() * 1e5, -1}
		code := "null"
		if r.IntN(2) == 0 {
			code = fmt.Sprintf("%q", codes[r.IntN(len(codes))])
		}
		retry := []string{"null", "true", "false"}[r.IntN(3)]
		line := fmt.Sprintf(`{"version":1,"event_id":%q,"ts":%q,"seq":%d,"phase":"finish","data":%s,%s,`+
			`"ok":%t,"duration_ms":%s,"error_code":%s,"error_type":%s,"error_message":%s,"error_retryable":%s,"stdout":%s,"stderr":%s}`,
			uuid.UUID(randBytes16(r)), ts(), seq(), dataPool[r.IntN(len(dataPool))], common,
			r.IntN(2) == 0, fmt.Sprint(durations[r.IntN(len(durations))]), code,
			jsonStr(optStr()), jsonStr(optStr()), retry, jsonStr(optStr()), jsonStr(optStr()))
		e := decodeLine(t, line)
		if start != nil && r.IntN(2) == 0 {
			e.Data = start.Data // the common case: finish data same as start
		}
		e.StdoutBytes, e.StderrBytes = optBytes(), optBytes()
		finish = &e
	}
	return start, finish
}

func randBytes16(r *rand.Rand) [16]byte {
	var b [16]byte
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func jsonStr(s *string) string {
	if s == nil {
		return "null"
	}
	// %q is Go syntax; JSON-quote through the event model's own rules is not
	// needed for the pool's characters except the escapes Go and JSON share.
	return fmt.Sprintf("%q", *s)
}

func TestStartFromDuration(t *testing.T) {
	end := pcommon.Timestamp(10_000_000)
	assert.Equal(t, pcommon.Timestamp(7_500_000), startFromDuration(end, 2.5))
	assert.Equal(t, end, startFromDuration(end, -1))
	assert.Equal(t, end, startFromDuration(end, math.NaN()))
	assert.Equal(t, pcommon.Timestamp(0), startFromDuration(end, 1e300))
}

func TestSlotOfFindsEveryNameAndNothingElse(t *testing.T) {
	for i, name := range attrNames {
		if got := slotOf(name); got != i {
			t.Errorf("slotOf(%q) = %d, want %d", name, got, i)
		}
		for _, other := range []string{name[:len(name)-1], name + "x", "x" + name[1:], strings.ToUpper(name)} {
			if got := slotOf(other); got >= 0 {
				t.Errorf("slotOf(%q) = %d, want -1", other, got)
			}
		}
	}
	for _, k := range []string{"", "service.name", strings.Repeat("s", 200)} {
		if got := slotOf(k); got >= 0 {
			t.Errorf("slotOf(%q) = %d, want -1", k, got)
		}
	}
}
