package logmap

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/conformance"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

const startLine = `{"data":{"big":1180591620717411303424,"f":30.0,"n":null,"nested":{"a":[null,-0.0,1e-05]}},"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","op":"write","parent_span_id":null,"phase":"start","seq":7,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T15:09:26.535897Z","version":1}`

const finishLine = `{"data":{},"duration_ms":250.125,"error_code":"exec_nonzero","error_message":"exit 2","error_retryable":null,"error_type":"ExecNonZeroError","event_id":"1b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ok":false,"op":"exec","parent_span_id":"sandbox_op_1","phase":"finish","seq":8,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"sandbox_op_0af7651916cd43dd8448eb211c80319c","stderr":null,"stdout":"hi","trace_id":null,"ts":"2026-03-14T20:39:26.786022+05:30","version":1}`

// logRecord is the single record EventsToLogs makes for e.
func logRecord(e *auditevent.Event) plog.LogRecord {
	return EventsToLogs([]auditevent.Event{*e}, "test").ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
}

func decode(t testing.TB, line string) auditevent.Event {
	t.Helper()
	e, err := auditevent.Decode([]byte(line))
	require.NoError(t, err)
	return e
}

func TestLogRecordStart(t *testing.T) {
	e := decode(t, startLine)
	before := time.Now()
	lr := logRecord(&e)

	assert.Equal(t, "sandbox.session.start", lr.EventName())
	assert.Equal(t, time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC), lr.Timestamp().AsTime())
	assert.False(t, lr.ObservedTimestamp().AsTime().Before(before.Truncate(time.Microsecond)))
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", lr.TraceID().String())
	assert.Equal(t, "00f067aa0ba902b7", lr.SpanID().String())
	assert.Equal(t, plog.SeverityNumberInfo, lr.SeverityNumber())
	assert.Equal(t, "INFO", lr.SeverityText())
	assert.Equal(t, pcommon.ValueTypeStr, lr.Body().Type())
	assert.Equal(t, startLine, lr.Body().Str(), "body is the canonical line without its newline")
	assert.Equal(t, map[string]any{
		"sandbox.session.id":  "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b",
		"sandbox.operation":   "write",
		"sandbox.event.phase": "start",
		"sandbox.event.seq":   int64(7),
	}, lr.Attributes().AsRaw())

	got, dropped, err := FromLogRecord(lr)
	require.NoError(t, dropped)
	require.NoError(t, err)
	assert.Equal(t, startLine+"\n", string(auditevent.Line(&got)))
	assert.Nil(t, got.StdoutBytes)
}

func TestLogRecordFailedFinish(t *testing.T) {
	e := decode(t, finishLine)
	e.StdoutBytes = []byte("raw\xffout")
	e.StderrBytes = []byte{}
	lr := logRecord(&e)

	assert.Equal(t, "sandbox.session.finish", lr.EventName())
	assert.Equal(t, time.Date(2026, 3, 14, 15, 9, 26, 786022000, time.UTC), lr.Timestamp().AsTime())
	// Not OTel ids: the record carries the ids of the span the event maps
	// to, computed here from the definition in docs/format.md.
	assert.Equal(t, "6f1c2a8e3b4d4e5f9a0b1c2d3e4f5a6b", lr.TraceID().String(), "null trace_id: the session's")
	derived := uuid.NewSHA1(uuid.MustParse("d5522618-d9a4-5682-af63-f0e537900855"),
		[]byte("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b/sandbox_op_0af7651916cd43dd8448eb211c80319c"))
	assert.Equal(t, pcommon.SpanID(derived[:8]), lr.SpanID(), "a Python span id: derived")
	span := ptrace.NewSpanSlice()
	spanmap.AppendSpan(span, nil, &e)
	assert.Equal(t, span.At(0).TraceID(), lr.TraceID(), "the record's trace is its span's")
	assert.Equal(t, span.At(0).SpanID(), lr.SpanID(), "the record's span id is its span's")
	assert.Equal(t, plog.SeverityNumberWarn, lr.SeverityNumber())
	assert.Equal(t, "WARN", lr.SeverityText())
	assert.Equal(t, finishLine, lr.Body().Str())
	v, ok := lr.Attributes().Get(semconv.AttrExecStdoutBytes)
	require.True(t, ok)
	assert.Equal(t, pcommon.ValueTypeBytes, v.Type())
	assert.Equal(t, []byte("raw\xffout"), v.Bytes().AsRaw())

	got, dropped, err := FromLogRecord(lr)
	require.NoError(t, dropped)
	require.NoError(t, err)
	assert.Equal(t, finishLine+"\n", string(auditevent.Line(&got)))
	assert.Equal(t, []byte("raw\xffout"), got.StdoutBytes)
	assert.NotNil(t, got.StderrBytes)
	assert.Empty(t, got.StderrBytes)
}

func TestOKFinishIsInfo(t *testing.T) {
	e := decode(t, finishLine)
	e.OK = true
	lr := logRecord(&e)
	assert.Equal(t, plog.SeverityNumberInfo, lr.SeverityNumber())
}

func TestTimestampOutsideLogRange(t *testing.T) {
	e := decode(t, startLine)
	var err error
	e.TS, err = auditevent.ParseTimestamp("1969-07-20T20:17:40Z")
	require.NoError(t, err)
	lr := logRecord(&e)
	assert.Equal(t, pcommon.Timestamp(0), lr.Timestamp())
	got, dropped, err := FromLogRecord(lr)
	require.NoError(t, dropped)
	require.NoError(t, err)
	assert.Equal(t, "1969-07-20T20:17:40Z", got.TS.String())
}

func TestFromLogRecordBase64Output(t *testing.T) {
	e := decode(t, finishLine)
	lr := logRecord(&e)
	lr.Attributes().PutStr(semconv.AttrExecStdoutBytes, "aGk=")
	got, dropped, err := FromLogRecord(lr)
	require.NoError(t, err)
	require.NoError(t, dropped)
	assert.Equal(t, []byte("hi"), got.StdoutBytes)
}

// A malformed output attribute is left out, as the span mapping leaves it
// out: the event is kept, and dropped names the attribute, not its value.
func TestFromLogRecordDropsMalformedOutput(t *testing.T) {
	e := decode(t, finishLine)
	for name, set := range map[string]func(pcommon.Map){
		"not base64":  func(m pcommon.Map) { m.PutStr(semconv.AttrExecStdoutBytes, "%%%secret") },
		"not bytes":   func(m pcommon.Map) { m.PutInt(semconv.AttrExecStdoutBytes, 1) },
		"stderr, too": func(m pcommon.Map) { m.PutStr(semconv.AttrExecStderrBytes, "%%%secret") },
	} {
		lr := logRecord(&e)
		lr.Attributes().PutEmptyBytes(semconv.AttrExecStderrBytes).FromRaw([]byte("kept"))
		set(lr.Attributes())
		got, dropped, err := FromLogRecord(lr)
		require.NoError(t, err, name)
		want := finishLine
		if name != "stderr, too" { // the text the raw bytes were to replace goes too
			want = strings.Replace(finishLine, `"stdout":"hi"`, `"stdout":null`, 1)
		}
		assert.Equal(t, want+"\n", string(auditevent.Line(&got)), name)
		var ae *spanmap.AttrError
		require.ErrorAs(t, dropped, &ae, name)
		assert.NotContains(t, dropped.Error(), "secret", name)
		if name == "stderr, too" {
			assert.Equal(t, semconv.AttrExecStderrBytes, ae.Attr)
			assert.Nil(t, got.StderrBytes)
			continue
		}
		assert.Equal(t, semconv.AttrExecStdoutBytes, ae.Attr, name)
		assert.Nil(t, got.StdoutBytes, name)
		assert.Equal(t, []byte("kept"), got.StderrBytes, name)
	}
	both := logRecord(&e)
	both.Attributes().PutStr(semconv.AttrExecStdoutBytes, "%%%")
	both.Attributes().PutInt(semconv.AttrExecStderrBytes, 1)
	_, dropped, err := FromLogRecord(both)
	require.NoError(t, err)
	assert.ErrorContains(t, dropped, semconv.AttrExecStdoutBytes, "both attributes are named")
	assert.ErrorContains(t, dropped, semconv.AttrExecStderrBytes, "both attributes are named")

	ld := EventsToLogs([]auditevent.Event{e}, "s")
	ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().PutStr(semconv.AttrExecStdoutBytes, "%%%")
	events, st := AppendLogs(nil, ld)
	assert.Len(t, events, 1)
	assert.Equal(t, 1, st.Dropped)
	assert.Zero(t, st.Invalid)
}

func TestFromLogRecordNotAuditEvent(t *testing.T) {
	e := decode(t, startLine)
	tests := map[string]func(plog.LogRecord){
		"no event name":    func(lr plog.LogRecord) { lr.SetEventName("") },
		"other event name": func(lr plog.LogRecord) { lr.SetEventName("browser.page_view") },
		"other event name, body not a string": func(lr plog.LogRecord) {
			lr.SetEventName("browser.page_view")
			lr.Body().SetEmptyMap().PutStr("op", "exec")
		},
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			lr := logRecord(&e)
			mutate(lr)
			_, _, err := FromLogRecord(lr)
			assert.ErrorIs(t, err, ErrNotAuditEvent)
		})
	}
}

func TestFromLogRecordInvalid(t *testing.T) {
	e := decode(t, startLine)
	tests := map[string]struct {
		body  string
		name  string
		field string
	}{
		"not JSON":           {body: "hello", name: semconv.EventSessionStart},
		"bad op":             {body: `{"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","seq":1,"op":"fly","phase":"start","span_id":"x"}`, name: semconv.EventSessionStart, field: "op"},
		"seq as string":      {body: `{"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","seq":"1","op":"exec","phase":"start","span_id":"x"}`, name: semconv.EventSessionStart, field: "seq"},
		"phase disagrees":    {body: startLine, name: semconv.EventSessionFinish},
		"duration as string": {body: `{"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","seq":1,"op":"exec","phase":"finish","span_id":"x","duration_ms":"x","ok":true}`, name: semconv.EventSessionFinish, field: "duration_ms"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			lr := logRecord(&e)
			lr.SetEventName(tt.name)
			lr.Body().SetStr(tt.body)
			_, _, err := FromLogRecord(lr)
			require.Error(t, err)
			assert.NotErrorIs(t, err, ErrNotAuditEvent)
			assert.Contains(t, err.Error(), tt.name)
			if tt.field != "" {
				var fe *auditevent.FieldError
				require.True(t, errors.As(err, &fe), err)
				assert.Equal(t, tt.field, fe.Field)
			}
		})
	}
}

// TestFromLogRecordNamedWithoutTextBody: a record named as an audit event
// whose body is not text (a map of the event's fields, nothing) claims to be an event and is not a valid one: it is refused,
// naming the body, so a client that sent only such records hears of it
// instead of getting success for records nothing was written of.
func TestFromLogRecordNamedWithoutTextBody(t *testing.T) {
	e := decode(t, startLine)
	tests := map[string]func(pcommon.Value){
		"map":   func(v pcommon.Value) { v.SetEmptyMap().PutStr("op", "exec") },
		"empty": func(v pcommon.Value) { pcommon.NewValueEmpty().CopyTo(v) },
		"int":   func(v pcommon.Value) { v.SetInt(1) },
	}
	for name, set := range tests {
		t.Run(name, func(t *testing.T) {
			lr := logRecord(&e)
			set(lr.Body())
			_, _, err := FromLogRecord(lr)
			require.Error(t, err)
			assert.NotErrorIs(t, err, ErrNotAuditEvent)
			var fe *auditevent.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Empty(t, fe.Field, "the body as a whole")
			assert.Equal(t, "string_type", fe.Type)
			assert.Contains(t, err.Error(), semconv.EventSessionStart)

			_, st := AppendLogs(nil, logsOf(lr))
			assert.Equal(t, 1, st.Invalid)
			assert.Zero(t, st.NotAudit)
		})
	}
}

// logsOf is a Logs holding a copy of lr alone.
func logsOf(lr plog.LogRecord) plog.Logs {
	ld := plog.NewLogs()
	lr.CopyTo(ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty())
	return ld
}

// TestRoundTripVectors sends every valid event of the shared vectors through
// a log record and over the OTLP wire (protobuf and JSON).
func TestRoundTripVectors(t *testing.T) {
	vectors, err := conformance.LoadAll()
	require.NoError(t, err)
	var events []auditevent.Event
	var want, names []string
	for _, v := range vectors {
		if v.Kind != "encode" {
			continue
		}
		e, err := auditevent.Decode([]byte(v.Input))
		if err != nil {
			continue
		}
		exp, err := v.ExpectString()
		require.NoError(t, err)
		if e.IsFinish() && len(events)%3 == 0 {
			e.StdoutBytes = []byte(v.Name)
		}
		events = append(events, e)
		want = append(want, exp)
		names = append(names, v.Name)
	}
	require.Greater(t, len(events), 50)
	ld := EventsToLogs(events, "sandboxaudit")
	assert.Equal(t, "sandboxaudit", ld.ResourceLogs().At(0).ScopeLogs().At(0).Scope().Name())
	assert.Equal(t, len(events), ld.LogRecordCount())
	requireSpanIDs(t, ld, events, names)

	wires := map[string]func(plog.Logs) plog.Logs{
		"pdata": func(ld plog.Logs) plog.Logs { return ld },
		"proto": func(ld plog.Logs) plog.Logs {
			b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
			require.NoError(t, err)
			out, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
			require.NoError(t, err)
			return out
		},
		"json": func(ld plog.Logs) plog.Logs {
			b, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
			require.NoError(t, err)
			out, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(b)
			require.NoError(t, err)
			return out
		},
	}
	for wire, rt := range wires {
		got, st := AppendLogs(nil, rt(ld))
		require.Equal(t, Stats{Records: len(events), Events: len(events)}, st, wire)
		for i := range got {
			require.Equal(t, want[i], string(auditevent.Line(&got[i])), "%s: %s", wire, names[i])
			require.Equal(t, events[i].StdoutBytes, got[i].StdoutBytes, wire)
		}
	}
}

// requireSpanIDs requires each record of ld to carry the trace and span id
// of the span its event maps to, whatever ids the event has (OTel hex in
// either case, a Python SDK span id, a null or non-hex trace_id).
func requireSpanIDs(t *testing.T, ld plog.Logs, events []auditevent.Event, names []string) {
	t.Helper()
	records := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	spans := ptrace.NewSpanSlice()
	for i := range events {
		span := spanmap.AppendSpan(spans, &events[i], nil)
		require.Equal(t, span.TraceID(), records.At(i).TraceID(), names[i])
		require.Equal(t, span.SpanID(), records.At(i).SpanID(), names[i])
	}
}

func TestAppendLogsCounts(t *testing.T) {
	e := decode(t, startLine)
	ld := EventsToLogs([]auditevent.Event{e, e}, "s")
	records := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	records.AppendEmpty().Body().SetStr("an ordinary log line")
	bad := records.AppendEmpty()
	bad.SetEventName(semconv.EventSessionStart)
	bad.Body().SetStr("{")
	bad2 := records.AppendEmpty()
	bad2.SetEventName(semconv.EventSessionFinish)
	bad2.Body().SetStr("[]")

	dst := []auditevent.Event{{}}
	got, st := AppendLogs(dst, ld)
	assert.Len(t, got, 3)
	assert.Equal(t, 5, st.Records)
	assert.Equal(t, 2, st.Events)
	assert.Equal(t, 1, st.NotAudit)
	assert.Equal(t, 2, st.Invalid)
	assert.Contains(t, st.FirstInvalid.Error(), semconv.EventSessionStart)
	assert.Contains(t, st.LastInvalid.Error(), semconv.EventSessionFinish)
}

func BenchmarkEventsToLogs1000(b *testing.B) {
	events := make([]auditevent.Event, 1000)
	for i := range events {
		events[i] = decode(b, startLine)
	}
	b.ReportAllocs()
	for b.Loop() {
		EventsToLogs(events, "s")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/event")
}

func BenchmarkFromLogRecord(b *testing.B) {
	e := decode(b, finishLine)
	e.StdoutBytes = []byte("output")
	lr := logRecord(&e)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := FromLogRecord(lr); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEventInBody: a text body is read as an event whatever the record's
// name, blanks before the object included; other text is not one.
func TestEventInBody(t *testing.T) {
	for body, want := range map[string]bool{
		startLine:             true,
		"\n\t " + startLine:   true,
		"GET /health 200":     false,
		`{"op":"exec"}`:       false,
		"":                    false,
		"[" + startLine + "]": false,
	} {
		lr := plog.NewLogRecord()
		lr.SetEventName("app.line")
		lr.Body().SetStr(body)
		e, ok := EventInBody(lr)
		assert.Equal(t, want, ok, "%.20q", body)
		if want {
			assert.Equal(t, "write", e.Op)
		}
	}
}
