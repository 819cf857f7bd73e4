package spanmap

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestAppendTracesIDsAcrossArenaChunks maps more spans than three arena
// chunks hold, with a malformed span between them, and checks every
// event's ids against its own span: a pointer into a chunk that moved or
// was reused would show another span's ids.
func TestAppendTracesIDsAcrossArenaChunks(t *testing.T) {
	n := 3*idArenaChunk + 17
	td := sandboxtraceTraces(n)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	// Bad data fails after the span took its arena slot.
	spans.At(idArenaChunk).Attributes().PutStr("sandbox.start_data", "{")

	evs, st := NewMapper(0).AppendTraces(nil, td)
	require.Equal(t, 1, st.Invalid)
	require.Len(t, evs, 2*(n-1))
	for i, ev := range evs {
		k := i / 2
		if k >= idArenaChunk {
			k++ // the malformed span has no events
		}
		span := spans.At(k)
		requireHexIDs(t, span, ev.SpanID, *ev.TraceID, *ev.ParentSpanID)
	}
	// The two events of a span share the strings.
	require.Same(t, evs[0].TraceID, evs[1].TraceID)
}

func requireHexIDs(t *testing.T, span ptrace.Span, spanID, traceID, parentID string) {
	t.Helper()
	sid, tid, pid := span.SpanID(), span.TraceID(), span.ParentSpanID()
	require.Equal(t, hex.EncodeToString(sid[:]), spanID)
	require.Equal(t, hex.EncodeToString(tid[:]), traceID)
	require.Equal(t, hex.EncodeToString(pid[:]), parentID)
}

// TestAppendTracesAllocatesPerChunkNotPerSpan: a 1,000-span batch into a
// slice with room allocates only the id arena's chunks.
func TestAppendTracesAllocatesPerChunkNotPerSpan(t *testing.T) {
	td := sandboxtraceTraces(1000)
	m := NewMapper(0)
	dst := make([]auditevent.Event, 0, 2000)
	allocs := testing.AllocsPerRun(5, func() {
		out, st := m.AppendTraces(dst[:0], td)
		if st.Events != 2000 || len(out) != 2000 {
			t.Fatal(st)
		}
	})
	chunks := (1000 + idArenaChunk - 1) / idArenaChunk
	require.LessOrEqual(t, allocs, float64(chunks), "allocations per 1,000-span batch")
}
