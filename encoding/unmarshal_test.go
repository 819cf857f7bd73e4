package sandboxauditencoding

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/ndjson"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/conformance"
)

const (
	goodStart  = `{"data":{},"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","op":"exec","parent_span_id":null,"phase":"start","seq":1,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T15:09:26.535897Z","version":1}`
	goodFinish = `{"data":{},"duration_ms":3.0,"error_code":null,"error_message":null,"error_retryable":null,"error_type":null,"event_id":"1b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ok":true,"op":"exec","parent_span_id":null,"phase":"finish","seq":2,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","stderr":null,"stdout":"secret-output","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T15:09:26.538897Z","version":1}`
)

func TestUnmarshalLogsRecords(t *testing.T) {
	ext := newExt(t, &Config{}, nil)
	// Blank lines, a CRLF line end and a last line without "\n" are fine.
	ld, err := ext.UnmarshalLogs([]byte(goodStart + "\r\n\n  \n" + goodFinish))
	require.NoError(t, err)
	records := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	require.Equal(t, 2, records.Len())
	assert.Equal(t, "github.com/sandboxaudit/sandboxaudit/encoding", ld.ResourceLogs().At(0).ScopeLogs().At(0).Scope().Name())

	start, finish := records.At(0), records.At(1)
	assert.Equal(t, "sandbox.session.start", start.EventName())
	assert.Equal(t, "sandbox.session.finish", finish.EventName())
	assert.Equal(t, goodStart, start.Body().Str())
	assert.Equal(t, goodFinish, finish.Body().Str(), "the line's own stdout string stays in the record")
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", start.TraceID().String())
	assert.Equal(t, "00f067aa0ba902b7", start.SpanID().String())
	assert.Equal(t, map[string]any{
		"sandbox.session.id":  "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b",
		"sandbox.operation":   "exec",
		"sandbox.event.phase": "finish",
		"sandbox.event.seq":   int64(2),
	}, finish.Attributes().AsRaw())

	empty, err := ext.UnmarshalLogs(nil)
	require.NoError(t, err)
	assert.Zero(t, empty.LogRecordCount())
}

func TestUnmarshalBadLine(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	ext := newExt(t, &Config{}, tt)

	bad := strings.Replace(goodFinish, `"op":"exec"`, `"op":"exfiltrate-secret-output"`, 1)
	msg := []byte(goodStart + "\n\n" + bad + "\n")
	for name, unmarshal := range map[string]func([]byte) (int, error){
		"logs": func(b []byte) (int, error) {
			ld, err := ext.UnmarshalLogs(b)
			return ld.LogRecordCount(), err
		},
		"traces": func(b []byte) (int, error) {
			td, err := ext.UnmarshalTraces(b)
			return td.SpanCount(), err
		},
	} {
		t.Run(name, func(t *testing.T) {
			n, err := unmarshal(msg)
			require.Error(t, err)
			assert.Zero(t, n, "nothing of a refused message is delivered")
			assert.Equal(t, "sandboxaudit_encoding: invalid message: line 3: op: literal_error", err.Error())
			assert.NotContains(t, err.Error(), "secret", "values never reach the error text")
			assert.True(t, errors.Is(err, ErrInvalidMessage))
			var le *ndjson.LineError
			require.True(t, errors.As(err, &le))
			assert.Equal(t, 3, le.Line)
		})
	}
	rejected, ok := counter(t, tt, "otelcol_sandboxaudit_encoding_messages_rejected")
	require.True(t, ok)
	assert.Equal(t, map[string]int64{"": 2}, rejected)
	_, ok = counter(t, tt, "otelcol_sandboxaudit_encoding_events_unmarshaled")
	assert.False(t, ok, "no event of a refused message is counted")
}

// TestUnmarshalLogsRejectsWhatTheReferenceRejects feeds each reject vector
// as the second line of a message: the error names line 2 and the field the
// reference names.
func TestUnmarshalLogsRejectsWhatTheReferenceRejects(t *testing.T) {
	vectors, err := conformance.LoadAll()
	require.NoError(t, err)
	ext := newExt(t, &Config{}, nil)
	n := 0
	for _, v := range vectors {
		if v.Kind != "reject" || strings.Contains(v.Input, "\n") {
			continue
		}
		_, err := ext.UnmarshalLogs([]byte(goodStart + "\n" + v.Input + "\n"))
		require.Error(t, err, v.Name)
		var le *ndjson.LineError
		require.True(t, errors.As(err, &le), v.Name)
		assert.Equal(t, 2, le.Line, v.Name)
		var fe *auditevent.FieldError
		require.True(t, errors.As(err, &fe), v.Name)
		if want := v.LocField(); want != "" {
			assert.Equal(t, want, fe.Field, v.Name)
			assert.Contains(t, err.Error(), "line 2: "+want+": "+v.Error, v.Name)
		}
		n++
	}
	require.Greater(t, n, 10)
}

// eventLines maps spans back to canonical lines with a fresh mapper, as the
// sandboxaudit exporter does.
func eventLines(t *testing.T, td ptrace.Traces) string {
	t.Helper()
	events, st := spanmap.NewMapper(0).AppendTraces(nil, td)
	require.Zero(t, st.Invalid, "invalid spans: %v", st.FirstInvalid)
	var b []byte
	for i := range events {
		b = auditevent.AppendLine(b, &events[i])
	}
	return string(b)
}

func TestUnmarshalTracesRoundTrip(t *testing.T) {
	ext := newExt(t, execOutputConfig(), nil)
	msg, err := ext.MarshalTraces(sandboxTraces(2, 3))
	require.NoError(t, err)

	td, err := ext.UnmarshalTraces(msg)
	require.NoError(t, err)
	assert.Equal(t, 6, td.SpanCount(), "one span per operation")
	assert.Equal(t, string(msg), eventLines(t, td))
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < spans.Len(); i++ {
		_, incomplete := spans.At(i).Attributes().Get("sandbox.incomplete")
		assert.False(t, incomplete)
	}
}

// TestUnmarshalTracesAcrossMessages: a start and its finish in different
// messages become an incomplete span and a start-missing span, and still map
// back to exactly the two events.
func TestUnmarshalTracesAcrossMessages(t *testing.T) {
	ext := newExt(t, &Config{}, nil)
	first, err := ext.UnmarshalTraces([]byte(goodStart + "\n"))
	require.NoError(t, err)
	second, err := ext.UnmarshalTraces([]byte(goodFinish + "\n"))
	require.NoError(t, err)
	require.Equal(t, 1, first.SpanCount())
	require.Equal(t, 1, second.SpanCount())

	incomplete, ok := first.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().Get("sandbox.incomplete")
	require.True(t, ok)
	assert.True(t, incomplete.Bool())
	_, ok = second.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().Get("sandbox.event.start_missing")
	assert.True(t, ok)
	assert.Equal(t, goodStart+"\n", eventLines(t, first))
	assert.Equal(t, goodFinish+"\n", eventLines(t, second))
}

// TestUnmarshalTracesMismatchedPair: a finish that one span cannot carry
// with its start (another version, op, trace or parent) stays a span of its
// own within the message, so both lines map back unchanged.
func TestUnmarshalTracesMismatchedPair(t *testing.T) {
	ext := newExt(t, &Config{}, nil)
	for _, edit := range [][2]string{{`"version":1`, `"version":2`}, {`"op":"exec"`, `"op":"read"`}} {
		finish := strings.Replace(goodFinish, edit[0], edit[1], 1)
		require.NotEqual(t, goodFinish, finish, edit)
		msg := goodStart + "\n" + finish + "\n"
		td, err := ext.UnmarshalTraces([]byte(msg))
		require.NoError(t, err)
		assert.Equal(t, 2, td.SpanCount(), edit)
		assert.Equal(t, msg, eventLines(t, td), edit)
	}
}

// TestUnmarshalTracesRepeatedStart: a start line twice in one message (a
// client's resend inside one batch) becomes one span, as the exporter
// writes a start id once; UnmarshalLogs keeps both records.
func TestUnmarshalTracesRepeatedStart(t *testing.T) {
	ext := newExt(t, &Config{}, nil)
	msg := goodStart + "\n" + goodStart + "\n" + goodFinish + "\n"
	td, err := ext.UnmarshalTraces([]byte(msg))
	require.NoError(t, err)
	assert.Equal(t, 1, td.SpanCount())
	assert.Equal(t, goodStart+"\n"+goodFinish+"\n", eventLines(t, td))
	ld, err := ext.UnmarshalLogs([]byte(msg))
	require.NoError(t, err)
	assert.Equal(t, 3, ld.LogRecordCount())
}
