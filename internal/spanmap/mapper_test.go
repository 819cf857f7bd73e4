package spanmap

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

func TestSpanEventsFullLines(t *testing.T) {
	span := sandboxSpan(t, map[string]any{
		semconv.AttrStartSeq:  int64(3),
		semconv.AttrFinishSeq: int64(4),
		semconv.AttrStartData: `{"timeout_s":30.0,"command":"ls -la"}`,
	})
	span.SetParentSpanID(mustSpanID(t, parentHex))
	span.SetName("sandbox.exec")

	evs := mapOne(t, NewMapper(0), span)
	require.Equal(t, []string{
		`{"data":{"command":"ls -la","timeout_s":30.0},"event_id":"70107244-1490-568a-aa95-38e1a0abdaa1","op":"exec","parent_span_id":"b7ad6b7169203331","phase":"start","seq":3,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T14:53:20Z","version":1}` + "\n",
		`{"data":{"command":"ls -la","timeout_s":30.0},"duration_ms":1999.999999,"error_code":null,"error_message":null,"error_retryable":null,"error_type":null,"event_id":"9d93c539-3eb3-5b74-8fd4-244922efc555","ok":true,"op":"exec","parent_span_id":"b7ad6b7169203331","phase":"finish","seq":4,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","stderr":null,"stdout":null,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T14:53:21.999999Z","version":1}` + "\n",
	}, lines(evs))
}

func TestSpanEventsFinishWithErrorsLine(t *testing.T) {
	span := sandboxSpan(t, map[string]any{
		semconv.AttrOperation:      "write",
		semconv.AttrSessionID:      "6F1C2A8E3B4D4E5F9A0B1C2D3E4F5A6B", // any spelling the intake takes
		semconv.AttrStartSeq:       int64(10),
		semconv.AttrFinishSeq:      float64(11), // integral double accepted
		semconv.AttrStartID:        "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e",
		semconv.AttrFinishID:       "{1B9D8C7E-6F5A-4B3C-8D2E-1F0A9B8C7D6E}",
		semconv.AttrStartData:      `{"path":"/w/a.txt","bytes":12345678901234567890123}`,
		semconv.AttrFinishData:     `{"path":"/w/a.txt","n":null}`,
		semconv.AttrOK:             false,
		semconv.AttrDurationMS:     int64(3),
		semconv.AttrErrorType:      "PermissionError",
		semconv.AttrErrorCode:      "workspace_write_type_error",
		semconv.AttrErrorMessage:   "denied",
		semconv.AttrErrorRetryable: true,
	})
	span.Status().SetCode(ptrace.StatusCodeError)
	span.Status().SetMessage("status text is not used when the attribute is set")

	evs := mapOne(t, NewMapper(0), span)
	require.Equal(t, []string{
		`{"data":{"bytes":12345678901234567890123,"path":"/w/a.txt"},"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","op":"write","parent_span_id":null,"phase":"start","seq":10,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T14:53:20Z","version":1}` + "\n",
		`{"data":{"n":null,"path":"/w/a.txt"},"duration_ms":3.0,"error_code":"workspace_write_type_error","error_message":"denied","error_retryable":true,"error_type":"PermissionError","event_id":"1b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ok":false,"op":"write","parent_span_id":null,"phase":"finish","seq":11,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","stderr":null,"stdout":null,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T14:53:21.999999Z","version":1}` + "\n",
	}, lines(evs))
}

func TestSpanEventsFields(t *testing.T) {
	sub := func(s string) *string { return &s }
	tests := []struct {
		name   string
		attrs  map[string]any
		adjust func(ptrace.Span)
		check  func(t *testing.T, start, finish auditevent.Event)
	}{
		{
			name: "timestamps truncated to microseconds, duration from end minus start",
			adjust: func(s ptrace.Span) {
				s.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(999 * time.Nanosecond)))
				s.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(2*time.Second + 1999*time.Nanosecond)))
			},
			check: func(t *testing.T, start, finish auditevent.Event) {
				assert.Equal(t, "2026-03-14T14:53:20Z", start.TS.String())
				assert.Equal(t, "2026-03-14T14:53:22.000001Z", finish.TS.String())
				assert.Equal(t, 2000.001, finish.DurationMS)
			},
		},
		{
			name:  "duration_ms attribute wins over the span times",
			attrs: map[string]any{semconv.AttrDurationMS: 12.5},
			check: func(t *testing.T, _, finish auditevent.Event) {
				assert.Equal(t, 12.5, finish.DurationMS)
			},
		},
		{
			name: "status Error: ok false, status message is the error message",
			adjust: func(s ptrace.Span) {
				s.Status().SetCode(ptrace.StatusCodeError)
				s.Status().SetMessage("exit status 2")
			},
			check: func(t *testing.T, _, finish auditevent.Event) {
				assert.False(t, finish.OK)
				assert.Equal(t, sub("exit status 2"), finish.ErrorMessage)
				assert.Nil(t, finish.ErrorCode)
			},
		},
		{
			name:   "status Error without message: error_message null",
			adjust: func(s ptrace.Span) { s.Status().SetCode(ptrace.StatusCodeError) },
			check: func(t *testing.T, _, finish auditevent.Event) {
				assert.False(t, finish.OK)
				assert.Nil(t, finish.ErrorMessage)
			},
		},
		{
			name:  "sandbox.ok true beats status Error; status message is not an error message then",
			attrs: map[string]any{semconv.AttrOK: true},
			adjust: func(s ptrace.Span) {
				s.Status().SetCode(ptrace.StatusCodeError)
				s.Status().SetMessage("x")
			},
			check: func(t *testing.T, _, finish auditevent.Event) {
				assert.True(t, finish.OK)
				assert.Nil(t, finish.ErrorMessage)
			},
		},
		{
			name:   "status Ok: ok true",
			adjust: func(s ptrace.Span) { s.Status().SetCode(ptrace.StatusCodeOk) },
			check: func(t *testing.T, _, finish auditevent.Event) {
				assert.True(t, finish.OK)
			},
		},
		{
			name:  "finish data absent: same as start; both absent: {}",
			attrs: map[string]any{semconv.AttrStartData: `{"a":[1,2.50,{"z":1,"b":null}]}`},
			check: func(t *testing.T, start, finish auditevent.Event) {
				assert.Equal(t, `{"a":[1,2.5,{"b":null,"z":1}]}`, start.Data.String())
				assert.Equal(t, start.Data.String(), finish.Data.String())
			},
		},
		{
			name: "no data attributes: {}",
			check: func(t *testing.T, start, finish auditevent.Event) {
				assert.Equal(t, "{}", start.Data.String())
				assert.Equal(t, "{}", finish.Data.String())
			},
		},
		{
			name:  "exec output as OTLP bytes",
			attrs: map[string]any{semconv.AttrExecStdoutBytes: []byte("hi\xff\n"), semconv.AttrExecStderrBytes: []byte{}},
			check: func(t *testing.T, start, finish auditevent.Event) {
				assert.Equal(t, []byte("hi\xff\n"), finish.StdoutBytes)
				assert.NotNil(t, finish.StderrBytes, "empty output is still output")
				assert.Empty(t, finish.StderrBytes)
				assert.Nil(t, start.StdoutBytes)
			},
		},
		{
			name: "exec output as base64 strings",
			attrs: map[string]any{
				semconv.AttrExecStdoutBytes: base64.StdEncoding.EncodeToString([]byte("out\x00put")),
				semconv.AttrExecStderrBytes: "ZXJy",
			},
			check: func(t *testing.T, _, finish auditevent.Event) {
				assert.Equal(t, []byte("out\x00put"), finish.StdoutBytes)
				assert.Equal(t, []byte("err"), finish.StderrBytes)
			},
		},
		{
			name: "no parent: parent_span_id null; empty trace id: trace_id null",
			adjust: func(s ptrace.Span) {
				s.SetTraceID(pcommon.NewTraceIDEmpty())
			},
			check: func(t *testing.T, start, finish auditevent.Event) {
				assert.Nil(t, start.ParentSpanID)
				assert.Nil(t, start.TraceID)
				assert.Nil(t, finish.TraceID)
				assert.Equal(t, spanHex, finish.SpanID)
			},
		},
		{
			name:   "ids in lowercase hex",
			adjust: func(s ptrace.Span) { s.SetParentSpanID(pcommon.SpanID{0xAB, 0xCD, 0xEF, 0, 0, 0, 0, 1}) },
			check: func(t *testing.T, start, finish auditevent.Event) {
				assert.Equal(t, sub("abcdef0000000001"), start.ParentSpanID)
				assert.Equal(t, sub(traceHex), finish.TraceID)
				assert.Equal(t, spanHex, start.SpanID)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := sandboxSpan(t, tt.attrs)
			if tt.adjust != nil {
				tt.adjust(span)
			}
			start, finish := startFinish(t, mapOne(t, NewMapper(0), span))
			tt.check(t, start, finish)
		})
	}
}

func TestDerivedEventIDStable(t *testing.T) {
	ns := uuid.MustParse("d5522618-d9a4-5682-af63-f0e537900855")
	for _, phase := range []string{"start", "finish"} {
		want := uuid.NewSHA1(ns, []byte(traceHex+"/"+spanHex+"/"+phase))
		for run := 0; run < 2; run++ { // fresh mapper each time: nothing remembered
			start, finish := startFinish(t, mapOne(t, NewMapper(0), sandboxSpan(t, nil)))
			got := start.EventID
			if phase == "finish" {
				got = finish.EventID
			}
			assert.Equal(t, want, got, phase)
		}
	}
	// Computed with Python's uuid.uuid5 on the same name.
	id := DeriveEventID(mustTraceID(t, traceHex), mustSpanID(t, spanHex), auditevent.PhaseStart)
	assert.Equal(t, "70107244-1490-568a-aa95-38e1a0abdaa1", id.String())
}

func TestSeqAssignedPerSessionInArrivalOrder(t *testing.T) {
	m := NewMapper(10)
	var n uint64
	seqsOf := func(session string, attrs map[string]any) []int64 {
		a := map[string]any{semconv.AttrSessionID: session}
		for k, v := range attrs {
			a[k] = v
		}
		n++
		evs := mapOne(t, m, withSpanID(sandboxSpan(t, a), n))
		out := make([]int64, len(evs))
		for i := range evs {
			out[i] = evs[i].Seq
		}
		return out
	}
	assert.Equal(t, []int64{1, 2}, seqsOf(sessionA, nil))
	assert.Equal(t, []int64{1, 2}, seqsOf(sessionB, nil))
	assert.Equal(t, []int64{3, 4}, seqsOf(sessionA, nil))
	// A given seq is kept and raises the counter; the missing one follows.
	assert.Equal(t, []int64{10, 11}, seqsOf(sessionB, map[string]any{semconv.AttrStartSeq: int64(10)}))
	assert.Equal(t, []int64{12, 13}, seqsOf(sessionB, nil))
	// A missing start seq is assigned before the given finish seq is seen.
	assert.Equal(t, []int64{5, 9}, seqsOf(sessionA, map[string]any{semconv.AttrFinishSeq: int64(9)}))
	assert.Equal(t, []int64{10, 11}, seqsOf(sessionA, nil))
	// Given seqs below the counter do not lower it.
	assert.Equal(t, []int64{1, 2}, seqsOf(sessionA, map[string]any{semconv.AttrStartSeq: int64(1), semconv.AttrFinishSeq: int64(2)}))
	assert.Equal(t, []int64{12, 13}, seqsOf(sessionA, nil))
	assert.Zero(t, m.SeqEvictions())
}

// TestSeqOfAMappedSpanIsKept: a span mapped again (an exporter's retry)
// gets the seqs it got, so the copy is exact; other spans go on from the
// session's counter. Past the window, a span is new again.
func TestSeqOfAMappedSpanIsKept(t *testing.T) {
	m := NewMapper(10)
	seqs := func(id uint64) [2]int64 {
		evs := mapOne(t, m, withSpanID(sandboxSpan(t, nil), id))
		return [2]int64{evs[0].Seq, evs[1].Seq}
	}
	assert.Equal(t, [2]int64{1, 2}, seqs(1))
	assert.Equal(t, [2]int64{3, 4}, seqs(2))
	assert.Equal(t, [2]int64{1, 2}, seqs(1), "mapped again")
	assert.Equal(t, [2]int64{5, 6}, seqs(3))
	for id := uint64(4); id < 4+assignedWindow/2-2; id++ { // span 1 leaves the window, span 2 stays
		seqs(id)
	}
	assert.Equal(t, [2]int64{3, 4}, seqs(2), "the last window's events")
	assert.Equal(t, [2]int64{2 + assignedWindow + 1, 2 + assignedWindow + 2}, seqs(1), "out of the window")
}

func TestSeqCountersEvictLeastRecentlyUsed(t *testing.T) {
	m := NewMapper(2)
	sessionC := "11111111-2222-4333-8444-555555555555"
	var n uint64
	seq := func(session string) int64 {
		n++
		evs := mapOne(t, m, withSpanID(sandboxSpan(t, map[string]any{semconv.AttrSessionID: session}), n))
		return evs[0].Seq
	}
	assert.Equal(t, int64(1), seq(sessionA))
	assert.Equal(t, int64(1), seq(sessionB))
	assert.Equal(t, int64(3), seq(sessionA)) // A is now most recently used
	assert.Equal(t, int64(1), seq(sessionC)) // evicts B
	assert.Equal(t, int64(1), m.SeqEvictions())
	assert.Equal(t, int64(5), seq(sessionA)) // A survived
	assert.Equal(t, int64(1), seq(sessionB)) // B starts over (evicts C)
	assert.Equal(t, int64(2), m.SeqEvictions())
}

func TestSeqConcurrent(t *testing.T) {
	m := NewMapper(4)
	const workers, perWorker = 8, 50
	var mu sync.Mutex
	seen := make(map[int64]bool)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			td := ptrace.NewTraces()
			spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			for i := 0; i < perWorker; i++ {
				withSpanID(sandboxSpan(t, nil), uint64(w*perWorker+i+1)).CopyTo(spans.AppendEmpty())
			}
			evs, st := m.AppendTraces(nil, td)
			assert.Equal(t, 2*perWorker, st.Events)
			mu.Lock()
			defer mu.Unlock()
			for i := range evs {
				assert.False(t, seen[evs[i].Seq], "seq %d twice", evs[i].Seq)
				seen[evs[i].Seq] = true
			}
		}()
	}
	wg.Wait()
	require.Len(t, seen, 2*workers*perWorker)
	for s := int64(1); s <= 2*workers*perWorker; s++ {
		require.True(t, seen[s], "seq %d missing", s)
	}
}

func TestAppendTracesSkipsAndCounts(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	sandboxSpan(t, nil).CopyTo(spans.AppendEmpty())
	ptrace.NewSpan().CopyTo(spans.AppendEmpty())                                                  // no attributes
	sandboxSpan(t, map[string]any{semconv.AttrSessionID: drop}).CopyTo(spans.AppendEmpty())       // op only
	sandboxSpan(t, map[string]any{semconv.AttrOperation: "fly"}).CopyTo(spans.AppendEmpty())      // bad op
	sandboxSpan(t, map[string]any{semconv.AttrStartSeq: "7"}).CopyTo(spans.AppendEmpty())         // bad seq
	sandboxSpan(t, map[string]any{semconv.AttrErrorCode: "new_code"}).CopyTo(spans.AppendEmpty()) // ignored
	spans2 := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	sandboxSpan(t, map[string]any{semconv.AttrOperation: "read"}).CopyTo(spans2.AppendEmpty())

	dst := make([]auditevent.Event, 1, 16) // appends after what is there
	out, st := NewMapper(0).AppendTraces(dst, td)
	require.Len(t, out, 1+6)
	assert.Equal(t, "exec", out[1].Op)
	assert.Equal(t, "read", out[len(out)-1].Op)
	assert.Equal(t, 7, st.Spans)
	assert.Equal(t, 6, st.Events)
	assert.Equal(t, 2, st.NotSandbox)
	assert.Equal(t, 2, st.Invalid)
	assert.Equal(t, 1, st.Ignored)

	var ae *AttrError
	require.ErrorAs(t, st.FirstInvalid, &ae)
	assert.Equal(t, semconv.AttrOperation, ae.Attr)
	require.ErrorAs(t, st.LastInvalid, &ae)
	assert.Equal(t, semconv.AttrStartSeq, ae.Attr)
	require.ErrorAs(t, st.LastIgnored, &ae)
	assert.Equal(t, semconv.AttrErrorCode, ae.Attr)
}

func TestNotSandboxSpan(t *testing.T) {
	for name, attrs := range map[string]map[string]any{
		"no attributes":   {semconv.AttrOperation: drop, semconv.AttrSessionID: drop, "http.method": "GET"},
		"operation only":  {semconv.AttrSessionID: drop},
		"session id only": {semconv.AttrOperation: drop},
	} {
		t.Run(name, func(t *testing.T) {
			var st Stats
			evs, err := NewMapper(0).AppendSpanEvents(nil, sandboxSpan(t, attrs), &st)
			require.ErrorIs(t, err, ErrNotSandboxSpan)
			assert.Empty(t, evs)
			assert.Equal(t, Stats{Spans: 1, NotSandbox: 1}, st)
		})
	}
}

func TestMalformedSandboxSpans(t *testing.T) {
	tests := []struct {
		name  string
		attrs map[string]any
		attr  string
	}{
		{"op not one of the 14", map[string]any{semconv.AttrOperation: "curl https://x/?token=SEKRIT"}, semconv.AttrOperation},
		{"op not a string", map[string]any{semconv.AttrOperation: int64(3)}, semconv.AttrOperation},
		{"session not a UUID", map[string]any{semconv.AttrSessionID: "session-1"}, semconv.AttrSessionID},
		{"session not a string", map[string]any{semconv.AttrSessionID: []byte("x")}, semconv.AttrSessionID},
		{"start_data not an object", map[string]any{semconv.AttrStartData: `[1,2]`}, semconv.AttrStartData},
		{"start_data not JSON", map[string]any{semconv.AttrStartData: `{"a":}`}, semconv.AttrStartData},
		{"finish_data NaN", map[string]any{semconv.AttrFinishData: `{"a":NaN}`}, semconv.AttrFinishData},
		{"start_data not a string", map[string]any{semconv.AttrStartData: map[string]any{"a": 1}}, semconv.AttrStartData},
		{"seq a numeric string", map[string]any{semconv.AttrStartSeq: "7"}, semconv.AttrStartSeq},
		{"seq a fraction", map[string]any{semconv.AttrFinishSeq: 7.5}, semconv.AttrFinishSeq},
		{"ok not a bool", map[string]any{semconv.AttrOK: "true"}, semconv.AttrOK},
		{"duration not a number", map[string]any{semconv.AttrDurationMS: "3"}, semconv.AttrDurationMS},
		{"error.type not a string", map[string]any{semconv.AttrErrorType: int64(1)}, semconv.AttrErrorType},
		{"error message not a string", map[string]any{semconv.AttrErrorMessage: true}, semconv.AttrErrorMessage},
		{"error code not a string", map[string]any{semconv.AttrErrorCode: int64(1)}, semconv.AttrErrorCode},
		{"retryable not a bool", map[string]any{semconv.AttrErrorRetryable: "no"}, semconv.AttrErrorRetryable},
		{"extension span id not a string", map[string]any{semconv.AttrEventSpanID: int64(1)}, semconv.AttrEventSpanID},
		{"extension trace id not a string", map[string]any{semconv.AttrEventTraceID: int64(1)}, semconv.AttrEventTraceID},
		{"extension ts not a timestamp", map[string]any{semconv.AttrStartTS: "yesterday"}, semconv.AttrStartTS},
		{"extension version not an int", map[string]any{semconv.AttrEventVersion: "2"}, semconv.AttrEventVersion},
		{"incomplete not a bool", map[string]any{semconv.AttrIncomplete: "yes"}, semconv.AttrIncomplete},
		{"both halves missing", map[string]any{semconv.AttrIncomplete: true, semconv.AttrStartMissing: true}, semconv.AttrIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMapper(0)
			var st Stats
			evs, err := m.AppendSpanEvents(nil, sandboxSpan(t, tt.attrs), &st)
			var ae *AttrError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tt.attr, ae.Attr)
			assert.Contains(t, err.Error(), tt.attr)
			requireNoValue(t, err, tt.attrs)
			assert.False(t, errors.Is(err, ErrNotSandboxSpan))
			assert.Empty(t, evs)
			assert.Equal(t, 1, st.Invalid)
			assert.Equal(t, err, st.FirstInvalid)
			// A skipped span does not consume seqs.
			evs = mapOne(t, m, sandboxSpan(t, nil))
			assert.Equal(t, int64(1), evs[0].Seq)
		})
	}
}

// TestSpanWithOneIDForBothEventsIsRefused: explicit start and finish ids
// that are the same UUID (in any spelling) would write two different
// events under one event_id, and a reader deduplicating on it would drop
// one. The span is refused, naming the finish id.
func TestSpanWithOneIDForBothEventsIsRefused(t *testing.T) {
	const id = "11111111-2222-4333-8444-555555555555"
	var st Stats
	evs, err := NewMapper(0).AppendSpanEvents(nil, sandboxSpan(t, map[string]any{
		semconv.AttrStartID: id, semconv.AttrFinishID: "{" + strings.ToUpper(id) + "}",
	}), &st)
	var ae *AttrError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, semconv.AttrFinishID, ae.Attr)
	assert.Empty(t, evs)
	assert.Equal(t, 1, st.Invalid)
}

// TestZeroIDSpanWithoutEventIDsIsRefused: an all-zero span id (invalid in
// OTLP, what a hand-built request sends when it leaves the ids out) names no
// span, so the event ids derived from it would be the same for every such
// span of a trace, and of every trace with a zero trace id: each after the
// first would be taken for a duplicate and dropped. Such a span is refused,
// unless it carries both event ids. (A zero trace id alone maps, to a null
// trace_id: see TestSpanEventsFields.)
func TestZeroIDSpanWithoutEventIDsIsRefused(t *testing.T) {
	tests := []struct {
		name      string
		zeroTrace bool
		attrs     map[string]any
	}{
		{"zero span id", false, nil},
		{"both zero", true, nil},
		{"both zero, finish id given", true, map[string]any{semconv.AttrFinishID: "11111111-2222-4333-8444-555555555555"}},
		{"start id not a UUID", false, map[string]any{
			semconv.AttrStartID: "not-a-uuid", semconv.AttrFinishID: "11111111-2222-4333-8444-555555555555",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := sandboxSpan(t, tt.attrs)
			if tt.zeroTrace {
				span.SetTraceID(pcommon.NewTraceIDEmpty())
			}
			span.SetSpanID(pcommon.NewSpanIDEmpty())
			var st Stats
			evs, err := NewMapper(0).AppendSpanEvents(nil, span, &st)
			var ae *AttrError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, "span", ae.Attr)
			assert.Contains(t, err.Error(), semconv.AttrStartID)
			assert.Empty(t, evs)
			assert.Equal(t, 1, st.Invalid)
		})
	}
	// Both event ids given: nothing is derived, so the span maps.
	span := sandboxSpan(t, map[string]any{
		semconv.AttrStartID:  "11111111-2222-4333-8444-555555555555",
		semconv.AttrFinishID: "21111111-2222-4333-8444-555555555555",
	})
	span.SetTraceID(pcommon.NewTraceIDEmpty())
	span.SetSpanID(pcommon.NewSpanIDEmpty())
	start, finish := startFinish(t, mapOne(t, NewMapper(0), span))
	assert.Equal(t, "11111111-2222-4333-8444-555555555555", start.EventID.String())
	assert.Equal(t, "21111111-2222-4333-8444-555555555555", finish.EventID.String())
}

// TestSeqsPastInt64AreRefused: a session whose highest seq is the largest
// int64 has no seq left to assign; a span that needs one is refused
// instead of wrapping to a negative seq, and spans with explicit seqs
// still map.
func TestSeqsPastInt64AreRefused(t *testing.T) {
	m := NewMapper(0)
	var st Stats
	_, err := m.AppendSpanEvents(nil, sandboxSpan(t, map[string]any{semconv.AttrStartSeq: int64(math.MaxInt64)}), &st)
	var ae *AttrError
	require.ErrorAs(t, err, &ae, "the finish's seq would wrap")
	assert.Equal(t, "span", ae.Attr)
	_, err = m.AppendSpanEvents(nil, sandboxSpan(t, nil), &st)
	require.ErrorAs(t, err, &ae, "the session's counter is at the top")
	assert.Equal(t, 2, st.Invalid)

	evs, err := m.AppendSpanEvents(nil, sandboxSpan(t, map[string]any{semconv.AttrStartSeq: int64(5), semconv.AttrFinishSeq: int64(6)}), &st)
	require.NoError(t, err)
	assert.Equal(t, []int64{5, 6}, []int64{evs[0].Seq, evs[1].Seq})
}

// TestSpanTimePastInt64IsRefused: OTLP times are unsigned; one past the
// largest int64 nanosecond count would wrap to a time before 1970 and be
// written as if right. The span is refused, naming the field, whether the
// time feeds the event's ts or only its duration; the largest int64 maps.
func TestSpanTimePastInt64IsRefused(t *testing.T) {
	const top = pcommon.Timestamp(math.MaxInt64)
	tests := []struct {
		name       string
		start, end pcommon.Timestamp
		attrs      map[string]any
		field      string
	}{
		{"start 2^63", top + 1, top + 1, nil, fieldStartTime},
		{"end 2^64-1", top - 1000, math.MaxUint64, nil, fieldEndTime},
		{"end only behind a ts attribute, for the duration", top - 1000, top + 1,
			map[string]any{semconv.AttrFinishTS: "2026-03-14T15:09:26.785897Z", semconv.AttrDurationMS: drop}, fieldEndTime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := sandboxSpan(t, tt.attrs)
			span.SetStartTimestamp(tt.start)
			span.SetEndTimestamp(tt.end)
			var st Stats
			evs, err := NewMapper(0).AppendSpanEvents(nil, span, &st)
			var ae *AttrError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, "span", ae.Attr)
			assert.Contains(t, err.Error(), tt.field)
			assert.Empty(t, evs)
			assert.Equal(t, 1, st.Invalid)
		})
	}
	span := sandboxSpan(t, nil)
	span.SetStartTimestamp(top - 1000)
	span.SetEndTimestamp(top)
	evs := mapOne(t, NewMapper(0), span)
	assert.Equal(t, auditevent.TimestampFromTime(time.Unix(0, math.MaxInt64)), evs[1].TS)
	assert.Contains(t, string(auditevent.AppendJSON(nil, &evs[1])), `"ts":"2262-04-11T23:47:16.854775Z"`)
}

func TestForgivenAttributes(t *testing.T) {
	tests := []struct {
		name  string
		attrs map[string]any
		attr  string
		check func(t *testing.T, start, finish auditevent.Event)
	}{
		{
			name:  "unknown error code becomes null",
			attrs: map[string]any{semconv.AttrErrorCode: "quantum_decoherence", semconv.AttrErrorType: "X"},
			attr:  semconv.AttrErrorCode,
			check: func(t *testing.T, _, finish auditevent.Event) {
				assert.Nil(t, finish.ErrorCode)
				assert.Equal(t, "X", *finish.ErrorType)
			},
		},
		{
			name:  "invalid base64 output is dropped",
			attrs: map[string]any{semconv.AttrExecStdoutBytes: "not base64!", semconv.AttrExecStderrBytes: []byte("e")},
			attr:  semconv.AttrExecStdoutBytes,
			check: func(t *testing.T, _, finish auditevent.Event) {
				assert.Nil(t, finish.StdoutBytes)
				assert.Equal(t, []byte("e"), finish.StderrBytes)
			},
		},
		{
			name:  "invalid base64 output takes its text along",
			attrs: map[string]any{semconv.AttrExecStdoutBytes: "not base64!", semconv.AttrExecStdout: "stale", semconv.AttrExecStderr: "kept"},
			attr:  semconv.AttrExecStdoutBytes,
			check: func(t *testing.T, _, finish auditevent.Event) {
				assert.Nil(t, finish.StdoutBytes)
				assert.Nil(t, finish.Stdout, "text the raw bytes were to replace")
				assert.Equal(t, "kept", *finish.Stderr)
			},
		},
		{
			name:  "output of the wrong type is dropped",
			attrs: map[string]any{semconv.AttrExecStderrBytes: int64(5)},
			attr:  semconv.AttrExecStderrBytes,
			check: func(t *testing.T, _, finish auditevent.Event) {
				assert.Nil(t, finish.StderrBytes)
			},
		},
		{
			name:  "start id not a UUID: derived",
			attrs: map[string]any{semconv.AttrStartID: "evt-1"},
			attr:  semconv.AttrStartID,
			check: func(t *testing.T, start, _ auditevent.Event) {
				want := DeriveEventID(mustTraceID(t, traceHex), mustSpanID(t, spanHex), auditevent.PhaseStart)
				assert.Equal(t, want, start.EventID)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st Stats
			evs, err := NewMapper(0).AppendSpanEvents(nil, sandboxSpan(t, tt.attrs), &st)
			require.NoError(t, err)
			require.Len(t, evs, 2)
			assert.Equal(t, 1, st.Ignored)
			var ae *AttrError
			require.ErrorAs(t, st.LastIgnored, &ae)
			assert.Equal(t, tt.attr, ae.Attr)
			requireNoValue(t, st.LastIgnored, tt.attrs)
			tt.check(t, evs[0], evs[1])
		})
	}
}

// requireNoValue requires err's text to hold none of the string values of
// attrs: mapping errors are logged and answered to clients, and attribute
// values (an op, an error code, data) are the producer's text.
func requireNoValue(t *testing.T, err error, attrs map[string]any) {
	t.Helper()
	for k, v := range attrs {
		if s, ok := v.(string); ok && len(s) > 3 {
			assert.NotContains(t, err.Error(), s, "the value of %s", k)
		}
	}
}

func TestNewMapperDefault(t *testing.T) {
	assert.Equal(t, DefaultMaxSessions, NewMapper(-1).seqs.max)
	assert.Equal(t, 3, NewMapper(3).seqs.max)
}

func ExampleMapper_AppendTraces() {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetTraceID(pcommon.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36})
	span.SetSpanID(pcommon.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7})
	span.SetStartTimestamp(pcommon.Timestamp(1773500000_000000000))
	span.SetEndTimestamp(pcommon.Timestamp(1773500000_250000000))
	span.Attributes().PutStr(semconv.AttrOperation, "read")
	span.Attributes().PutStr(semconv.AttrSessionID, "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")
	span.Attributes().PutStr(semconv.AttrStartData, `{"path":"/workspace/a.txt"}`)

	evs, st := NewMapper(0).AppendTraces(nil, td)
	for i := range evs {
		fmt.Print(string(auditevent.Line(&evs[i])))
	}
	fmt.Println(st.Events, st.NotSandbox, st.Invalid)
	// Output:
	// {"data":{"path":"/workspace/a.txt"},"event_id":"70107244-1490-568a-aa95-38e1a0abdaa1","op":"read","parent_span_id":null,"phase":"start","seq":1,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T14:53:20Z","version":1}
	// {"data":{"path":"/workspace/a.txt"},"duration_ms":250.0,"error_code":null,"error_message":null,"error_retryable":null,"error_type":null,"event_id":"9d93c539-3eb3-5b74-8fd4-244922efc555","ok":true,"op":"read","parent_span_id":null,"phase":"finish","seq":2,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","stderr":null,"stdout":null,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T14:53:20.250000Z","version":1}
	// 2 0 0
}

// TestRefusedSpanLeavesDstAsItWas: the events are built in dst's spare
// room, so a span refused at any step (its fields, its start, its finish,
// one id for both) must leave the events before it untouched and clear
// what it wrote past them.
func TestRefusedSpanLeavesDstAsItWas(t *testing.T) {
	const id = "11111111-2222-4333-8444-555555555555"
	for name, attrs := range map[string]map[string]any{
		"fields": {semconv.AttrOperation: "fly"},
		"start":  {semconv.AttrStartTS: "yesterday"},
		"finish": {semconv.AttrOK: "true"},
		"one id": {semconv.AttrStartID: id, semconv.AttrFinishID: id},
	} {
		t.Run(name, func(t *testing.T) {
			m := NewMapper(0)
			first := mapOne(t, m, sandboxSpan(t, nil))
			want := append([]auditevent.Event(nil), first...)
			dst := make([]auditevent.Event, len(first), len(first)+4)
			copy(dst, first)
			var st Stats
			out, err := m.AppendSpanEvents(dst, sandboxSpan(t, attrs), &st)
			require.Error(t, err)
			assert.Equal(t, want, out)
			assert.Equal(t, make([]auditevent.Event, 2), dst[len(dst):len(dst)+2], "spare room not cleared")
		})
	}
}
