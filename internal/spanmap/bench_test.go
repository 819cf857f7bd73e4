package spanmap

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// benchTraces is a batch of n exec spans the way the Go instrumentation
// records them: seqs, data and a finish attribute set; 10 sessions.
func benchTraces(b *testing.B, n int, withSeqs bool) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := 0; i < n; i++ {
		span := spans.AppendEmpty()
		span.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, byte(i%10 + 1)})
		span.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, byte(i >> 8), byte(i)})
		span.SetParentSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9})
		span.SetStartTimestamp(pcommon.Timestamp(1773500000_000000000 + int64(i)*1000))
		span.SetEndTimestamp(pcommon.Timestamp(1773500000_250000000 + int64(i)*1000))
		a := span.Attributes()
		a.PutStr(semconv.AttrOperation, "exec")
		a.PutStr(semconv.AttrSessionID, fmt.Sprintf("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a%02d", i%10))
		if withSeqs {
			a.PutInt(semconv.AttrStartSeq, int64(2*i))
			a.PutInt(semconv.AttrFinishSeq, int64(2*i+1))
		}
		a.PutStr(semconv.AttrStartData, `{"argv":["sh","-lc","make test"],"timeout_s":30.0}`)
		a.PutBool(semconv.AttrOK, true)
		a.PutDouble(semconv.AttrDurationMS, 250.125)
		a.PutStr("process.exit.code", "0")
	}
	return td
}

func BenchmarkAppendTraces1000(b *testing.B) {
	for _, withSeqs := range []bool{true, false} {
		b.Run(fmt.Sprintf("seqs=%t", withSeqs), func(b *testing.B) {
			td := benchTraces(b, 1000, withSeqs)
			m := NewMapper(0)
			dst := make([]auditevent.Event, 0, 2000)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				out, st := m.AppendTraces(dst[:0], td)
				if st.Events != 2000 || len(out) != 2000 {
					b.Fatal(st)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/span")
		})
	}
}

func BenchmarkAppendSpan(b *testing.B) {
	start, err := auditevent.Decode([]byte(startLine))
	require.NoError(b, err)
	finish, err := auditevent.Decode([]byte(finishLine))
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		spans := ptrace.NewSpanSlice()
		AppendSpan(spans, &start, &finish)
	}
}

func BenchmarkRoundTrip(b *testing.B) {
	start, err := auditevent.Decode([]byte(startLine))
	require.NoError(b, err)
	finish, err := auditevent.Decode([]byte(finishLine))
	require.NoError(b, err)
	m := NewMapper(0)
	dst := make([]auditevent.Event, 0, 2)
	b.ReportAllocs()
	for b.Loop() {
		spans := ptrace.NewSpanSlice()
		span := AppendSpan(spans, &start, &finish)
		if _, err := m.AppendSpanEvents(dst[:0], span, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// sandboxtraceTraces is n exec spans with every attribute sandboxtrace sets
// on one (event ids, seqs, start and finish data, the flat exit code), over
// 100 sessions: the shape of bench/'s load and of a Go service's spans.
func sandboxtraceTraces(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		span := spans.AppendEmpty()
		span.SetName(semconv.SpanNamePrefix + "exec")
		span.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, byte(i%100 + 1)})
		span.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, byte(i >> 8), byte(i)})
		span.SetParentSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, byte(i%100 + 1)})
		span.SetStartTimestamp(pcommon.Timestamp(1773500000_000000000 + int64(i)*1_000_000))
		span.SetEndTimestamp(pcommon.Timestamp(1773500000_002345000 + int64(i)*1_000_000))
		cmd := fmt.Sprintf(`["python","-m","pytest","-q","tests/test_module_%d.py"]`, i%97)
		a := span.Attributes()
		a.PutStr(semconv.AttrOperation, "exec")
		a.PutStr(semconv.AttrSessionID, fmt.Sprintf("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a%02d", i%100))
		a.PutInt(semconv.AttrStartSeq, int64(2*i+1))
		a.PutStr(semconv.AttrStartID, fmt.Sprintf("be4c0000-0000-4000-8000-%012x", 2*i))
		a.PutStr(semconv.AttrStartData, `{"command":`+cmd+`,"shell":false,"timeout_s":30.0,"user":null}`)
		a.PutStr(semconv.AttrBackend, "docker")
		a.PutInt(semconv.AttrFinishSeq, int64(2*i+2))
		a.PutStr(semconv.AttrFinishID, fmt.Sprintf("be4c0000-0000-4000-8000-%012x", 2*i+1))
		a.PutBool(semconv.AttrOK, true)
		a.PutDouble(semconv.AttrDurationMS, 2.345)
		a.PutStr(semconv.AttrFinishData, `{"command":`+cmd+`,"exit_code":0,"process.exit.code":0,"shell":false,"timeout_s":30.0,"user":null}`)
		a.PutInt(semconv.AttrProcessExitCode, 0)
	}
	return td
}

func BenchmarkAppendTracesSandboxtrace(b *testing.B) {
	td := sandboxtraceTraces(1000)
	m := NewMapper(0)
	dst := make([]auditevent.Event, 0, 2000)
	b.ReportAllocs()
	for b.Loop() {
		out, st := m.AppendTraces(dst[:0], td)
		if st.Events != 2000 || len(out) != 2000 || st.Ignored != 0 {
			b.Fatal(st)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/span")
}
