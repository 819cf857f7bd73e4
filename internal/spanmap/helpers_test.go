package spanmap

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

const (
	traceHex  = "4bf92f3577b34da6a3ce929d0e0e4736"
	spanHex   = "00f067aa0ba902b7"
	parentHex = "b7ad6b7169203331"
	sessionA  = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	sessionB  = "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e"
)

// t0 is 2026-03-14T14:53:20Z.
var t0 = time.Unix(1773500000, 0).UTC()

func mustTraceID(t testing.TB, s string) pcommon.TraceID {
	t.Helper()
	id, ok := ParseTraceID(s)
	require.True(t, ok, s)
	return id
}

func mustSpanID(t testing.TB, s string) pcommon.SpanID {
	t.Helper()
	id, ok := ParseSpanID(s)
	require.True(t, ok, s)
	return id
}

// sandboxSpan builds a span with the standard ids and times (start t0, end
// t0+1.999999999s) and the given attributes on top of op/session.
func sandboxSpan(t testing.TB, attrs map[string]any) ptrace.Span {
	t.Helper()
	span := ptrace.NewSpan()
	span.SetTraceID(mustTraceID(t, traceHex))
	span.SetSpanID(mustSpanID(t, spanHex))
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(t0))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(1999999999 * time.Nanosecond)))
	all := map[string]any{semconv.AttrOperation: "exec", semconv.AttrSessionID: sessionA}
	for k, v := range attrs {
		if v == drop {
			delete(all, k)
			continue
		}
		all[k] = v
	}
	require.NoError(t, span.Attributes().FromRaw(all))
	return span
}

// drop removes a default attribute in sandboxSpan.
var drop = &struct{}{}

func lines(evs []auditevent.Event) []string {
	out := make([]string, len(evs))
	for i := range evs {
		out[i] = string(auditevent.Line(&evs[i]))
	}
	return out
}

// withSpanID gives span the span id n, so that its events are other
// events than those of a span with another n.
func withSpanID(span ptrace.Span, n uint64) ptrace.Span {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], n)
	span.SetSpanID(id)
	return span
}

func mapOne(t testing.TB, m *Mapper, span ptrace.Span) []auditevent.Event {
	t.Helper()
	evs, err := m.AppendSpanEvents(nil, span, nil)
	require.NoError(t, err)
	return evs
}

// startFinish checks that evs is one start and its finish, and returns them.
func startFinish(t testing.TB, evs []auditevent.Event) (start, finish auditevent.Event) {
	t.Helper()
	require.Len(t, evs, 2)
	require.Equal(t, auditevent.PhaseStart, evs[0].Phase)
	require.Equal(t, auditevent.PhaseFinish, evs[1].Phase)
	return evs[0], evs[1]
}
