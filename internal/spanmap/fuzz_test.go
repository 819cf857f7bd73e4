package spanmap

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// FuzzAppendTraces maps arbitrary OTLP/JSON export requests. It never
// panics, every event it gives is written as a canonical line that decodes
// back to the same line, and the half span AppendSpan makes of each event
// maps back to that line.
func FuzzAppendTraces(f *testing.F) {
	f.Add(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7",` +
		`"startTimeUnixNano":"1773500966535897000","endTimeUnixNano":"1773500966545897000","attributes":[` +
		`{"key":"sandbox.operation","value":{"stringValue":"exec"}},{"key":"sandbox.session.id","value":{"stringValue":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"}},` +
		`{"key":"sandbox.start_data","value":{"stringValue":"{\"a\":1e5,\"b\":\"\\u00e9\"}"}},{"key":"sandbox.event.start_ts","value":{"stringValue":"2026-03-14T15:09:26+05:30"}},` +
		`{"key":"sandbox.duration_ms","value":{"doubleValue":"NaN"}}]}]}]}]}`)
	f.Add(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[{"key":"sandbox.operation","value":{"stringValue":"read"}},` +
		`{"key":"sandbox.session.id","value":{"stringValue":"{6F1C2A8E-3B4D-4E5F-9A0B-1C2D3E4F5A6B}"}},{"key":"sandbox.incomplete","value":{"boolValue":true}},` +
		`{"key":"sandbox.event.start_seq","value":{"doubleValue":3.0}},{"key":"sandbox.event.span_id","value":{"stringValue":"sandbox_op_1"}}]}]}]}]}`)

	f.Fuzz(func(t *testing.T, body string) {
		req := ptraceotlp.NewExportRequest()
		if req.UnmarshalJSON([]byte(body)) != nil {
			return
		}
		events, _ := NewMapper(0).AppendTraces(nil, req.Traces())
		checkLines(t, events)
		spans := ptrace.NewSpanSlice()
		for i := range events {
			e := &events[i]
			var span ptrace.Span
			if e.Phase == auditevent.PhaseStart {
				span = AppendSpan(spans, e, nil)
			} else {
				span = AppendSpan(spans, nil, e)
			}
			back, err := NewMapper(0).AppendSpanEvents(nil, span, nil)
			require.NoError(t, err)
			require.Len(t, back, 1)
			require.Equal(t, string(auditevent.Line(e)), string(auditevent.Line(&back[0])))
		}
	})
}

func checkLines(t *testing.T, events []auditevent.Event) {
	for i := range events {
		line := auditevent.Line(&events[i])
		back, err := auditevent.Decode(line)
		require.NoError(t, err, "%s", line)
		require.Equal(t, string(line), string(auditevent.Line(&back)))
	}
}
