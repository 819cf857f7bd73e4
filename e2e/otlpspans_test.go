package e2e

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// otlpSpans is an OTLP protobuf request body of n sandbox exec spans, each
// in its own session and trace, numbered by request r so that every span of
// a run is distinct. The attributes are those sandboxtrace records,
// output captured.
func otlpSpans(t *testing.T, r, n int) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	base := time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)
	for i := range n {
		k := uint64(r)<<16 | uint64(i)
		var traceID pcommon.TraceID
		binary.BigEndian.PutUint64(traceID[:8], 0x4bf92f3577b34da6)
		binary.BigEndian.PutUint64(traceID[8:], k+1)
		var spanID pcommon.SpanID
		binary.BigEndian.PutUint64(spanID[:], 0x00f067aa00000000|(k+1))
		sp := spans.AppendEmpty()
		sp.SetName("sandbox.exec")
		sp.SetKind(ptrace.SpanKindInternal)
		sp.SetTraceID(traceID)
		sp.SetSpanID(spanID)
		start := base.Add(time.Duration(k) * time.Millisecond)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(1500 * time.Microsecond)))
		a := sp.Attributes()
		a.PutStr("sandbox.operation", "exec")
		a.PutStr("sandbox.session.id", fmt.Sprintf("9e3c4b5a-0000-4000-8000-%012x", k))
		a.PutInt("sandbox.event.start_seq", 1)
		a.PutInt("sandbox.event.finish_seq", 2)
		a.PutStr("sandbox.start_data", fmt.Sprintf(`{"command":["make","test"],"n":%d}`, k))
		a.PutStr("sandbox.finish_data", `{"exit_code":0}`)
		a.PutBool("sandbox.ok", true)
		a.PutDouble("sandbox.duration_ms", 1.5)
		a.PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw([]byte("PASS\n"))
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	return body
}
