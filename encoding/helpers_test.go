package sandboxauditencoding

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/encoding/internal/metadata"
)

// newExt creates and starts the extension with cfg and the telemetry tt
// (nil: no telemetry is read).
func newExt(t testing.TB, cfg *Config, tt *componenttest.Telemetry) *encodingExtension {
	t.Helper()
	set := extensiontest.NewNopSettings(metadata.Type)
	if tt != nil {
		set.TelemetrySettings = tt.NewTelemetrySettings()
	}
	ext, err := NewFactory().Create(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, ext.Shutdown(context.Background())) })
	return ext.(*encodingExtension)
}

// execOutputConfig includes exec output for every op, so that strings
// already in a line (which no policy can restore once redacted) are kept.
func execOutputConfig() *Config {
	return &Config{PayloadPolicy: auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(true)}}
}

// sandboxTraces builds sessions × ops sandbox spans, each session one trace
// under a non-sandbox root span (as sandboxtrace records them). Every exec
// span carries raw output and fails; every write has a data.bytes.
func sandboxTraces(sessions, ops int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	base := time.Date(2026, 3, 14, 15, 9, 26, 535897123, time.UTC)
	for s := range sessions {
		var traceID pcommon.TraceID
		binary.BigEndian.PutUint64(traceID[:8], uint64(0x4bf92f3577b34da6)+uint64(s))
		binary.BigEndian.PutUint64(traceID[8:], 0xa3ce929d0e0e4736)
		session := fmt.Sprintf("6f1c2a8e-3b4d-4e5f-9a0b-%012x", s)
		root := spans.AppendEmpty()
		root.SetName("sandbox.session")
		root.SetTraceID(traceID)
		root.SetSpanID(spanID(s, 0))
		root.SetStartTimestamp(pcommon.NewTimestampFromTime(base))
		root.SetEndTimestamp(pcommon.NewTimestampFromTime(base.Add(time.Minute)))
		for i := range ops {
			sp := spans.AppendEmpty()
			op := []string{"exec", "write", "read"}[i%3]
			sp.SetName("sandbox." + op)
			sp.SetKind(ptrace.SpanKindInternal)
			sp.SetTraceID(traceID)
			sp.SetSpanID(spanID(s, i+1))
			sp.SetParentSpanID(root.SpanID())
			start := base.Add(time.Duration(i) * time.Second)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(250125 * time.Microsecond)))
			a := sp.Attributes()
			a.PutStr("sandbox.operation", op)
			a.PutStr("sandbox.session.id", session)
			a.PutInt("sandbox.event.start_seq", int64(2*i+1))
			a.PutInt("sandbox.event.finish_seq", int64(2*i+2))
			switch op {
			case "exec":
				a.PutStr("sandbox.start_data", `{"command":["ls","-la"],"timeout":30.0}`)
				a.PutStr("sandbox.finish_data", `{"exit_code":2}`)
				a.PutBool("sandbox.ok", false)
				a.PutStr("error.type", "ExecNonZeroError")
				a.PutStr("sandbox.error.code", "exec_nonzero")
				a.PutStr("sandbox.error.message", "exit 2")
				a.PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw([]byte("total 0\n\xffdrwx é"))
				a.PutEmptyBytes("sandbox.exec.stderr_bytes").FromRaw([]byte("ls: warning"))
				sp.Status().SetCode(ptrace.StatusCodeError)
			case "write":
				a.PutStr("sandbox.start_data", `{"bytes":12,"path":"/workspace/notes.txt"}`)
				a.PutBool("sandbox.ok", true)
			default:
				a.PutStr("sandbox.start_data", `{"path":"/workspace/notes.txt"}`)
				a.PutBool("sandbox.ok", true)
			}
			a.PutDouble("sandbox.duration_ms", 250.125)
		}
	}
	return td
}

func spanID(session, i int) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], uint64(0x00f067aa0ba90000)+uint64(session)<<8+uint64(i)+1)
	return id
}

// counter returns the int sum of the named metric per attribute set (the
// empty string for no attributes), and whether it was recorded.
func counter(t *testing.T, tt *componenttest.Telemetry, name string) (map[string]int64, bool) {
	t.Helper()
	m, err := tt.GetMetric(name)
	if err != nil {
		return nil, false
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is not an int sum", name)
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		key := ""
		if v, ok := dp.Attributes.Value("reason"); ok {
			key = v.AsString()
		}
		out[key] += dp.Value
	}
	return out, true
}
