package sandboxauditprocessor

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

// rawCase is one way a span can carry a stream's raw output.
type rawCase struct {
	name      string
	put       func(m pcommon.Map, key string)
	malformed bool // the exporter and the processor drop it with its text
}

var rawCases = []rawCase{
	{name: "absent", put: func(pcommon.Map, string) {}},
	{name: "empty value", put: func(m pcommon.Map, k string) { m.PutEmpty(k) }},
	{name: "empty bytes", put: func(m pcommon.Map, k string) { m.PutEmptyBytes(k) }},
	{name: "bytes", put: func(m pcommon.Map, k string) { m.PutEmptyBytes(k).FromRaw([]byte("hello \xff world")) }},
	{name: "base64", put: func(m pcommon.Map, k string) { m.PutStr(k, "aGVsbG8gd29ybGQ=") }},
	{name: "bad base64", put: func(m pcommon.Map, k string) { m.PutStr(k, "%%%") }, malformed: true},
	{name: "int", put: func(m pcommon.Map, k string) { m.PutInt(k, 7) }, malformed: true},
}

// agreeSpan is a finished exec span with raw stdout per raw, a decoded
// stdout when stale is set, and a write length in its data.
func agreeSpan(raw rawCase, stale bool) ptrace.Traces {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetName("sandbox.exec")
	span.SetTraceID(pcommon.TraceID{1, 2, 3})
	span.SetSpanID(pcommon.SpanID{4, 5, 6})
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_700_000_000, 0)))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_700_000_001, 0)))
	attrs := span.Attributes()
	attrs.PutStr("sandbox.operation", "exec")
	attrs.PutStr("sandbox.session.id", "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")
	attrs.PutStr("sandbox.start_data", `{"bytes":12,"command":["cat"]}`)
	raw.put(attrs, "sandbox.exec.stdout_bytes")
	if stale {
		attrs.PutStr("sandbox.exec.stdout", "text from before the policy")
	}
	return td
}

// lines maps td's one span as the exporter does and encodes its events
// under pol.
func lines(t *testing.T, td ptrace.Traces, pol auditevent.Policy) string {
	t.Helper()
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	evs, err := spanmap.NewMapper(0).AppendSpanEvents(nil, span, nil)
	require.NoError(t, err)
	var out []byte
	for i := range evs {
		out = pol.AppendLine(out, &evs[i])
	}
	return string(out)
}

// TestBackendSeesWhatTheFileHolds: a span through the processor, then
// mapped with nothing redacted, gives the lines the audit exporter writes
// from the original span under the same policy. Raw output that is
// malformed takes its decoded text along in both: neither writes output
// the producer's raw bytes did not give.
func TestBackendSeesWhatTheFileHolds(t *testing.T) {
	keepAll := auditevent.Policy{IncludeExecOutput: true, MaxStdoutChars: math.MaxInt32, MaxStderrChars: math.MaxInt32, IncludeWriteLen: true}
	for _, include := range []bool{false, true} {
		for _, writeLen := range []bool{false, true} {
			cfg := createDefaultConfig().(*Config)
			cfg.PayloadPolicy.IncludeExecOutput = &include
			cfg.PayloadPolicy.IncludeWriteLen = &writeLen
			five := 5
			cfg.PayloadPolicy.MaxStdoutChars = &five
			pol := auditevent.PolicySet{Default: cfg.PayloadPolicy}.Resolve("exec")
			for _, raw := range rawCases {
				for _, stale := range []bool{false, true} {
					t.Run(fmt.Sprintf("include=%v/write_len=%v/%s/stale=%v", include, writeLen, raw.name, stale), func(t *testing.T) {
						file := lines(t, agreeSpan(raw, stale), pol)
						backend := lines(t, process(t, cfg, agreeSpan(raw, stale)), keepAll)
						assert.Equal(t, file, backend)
						if raw.malformed {
							assert.Contains(t, file, `"stdout":null`)
						}
					})
				}
			}
		}
	}
}

func process(t *testing.T, cfg *Config, td ptrace.Traces) ptrace.Traces {
	t.Helper()
	sink := &consumertest.TracesSink{}
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(typ), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	require.Len(t, sink.AllTraces(), 1)
	return sink.AllTraces()[0]
}
