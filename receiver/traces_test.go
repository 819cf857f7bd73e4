package sandboxauditreceiver

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

var (
	testTraceID = pcommon.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	testSpanID  = pcommon.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	testStart   = time.Date(2026, 3, 14, 15, 9, 26, 535897123, time.UTC)
	// The namespace of derived event ids, as docs/format.md gives it.
	eventIDNamespace = uuid.MustParse("d5522618-d9a4-5682-af63-f0e537900855")
)

// sandboxTraces is one sandbox exec span (as the Go instrumentation records
// it) plus one span of something else.
func sandboxTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	s := spans.AppendEmpty()
	s.SetName("sandbox.exec")
	s.SetKind(ptrace.SpanKindInternal)
	s.SetTraceID(testTraceID)
	s.SetSpanID(testSpanID)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(250 * time.Millisecond)))
	a := s.Attributes()
	a.PutStr("sandbox.operation", "exec")
	a.PutStr("sandbox.session.id", testSession.String())
	a.PutInt("sandbox.event.start_seq", 1)
	a.PutInt("sandbox.event.finish_seq", 2)
	a.PutStr("sandbox.start_data", `{"command":["ls"]}`)
	a.PutStr("sandbox.finish_data", `{"command":["ls"],"exit_code":0}`)
	a.PutBool("sandbox.ok", true)
	a.PutDouble("sandbox.duration_ms", 250.5)

	other := spans.AppendEmpty()
	other.SetName("GET /")
	other.SetTraceID(testTraceID)
	other.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	return td
}

// wantSandboxLines is what docs/format.md says the exec span maps to,
// written out independently of the mapping code.
func wantSandboxLines(t *testing.T) []string {
	t.Helper()
	traceHex, spanHex := "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	start := auditevent.Event{
		Version:   1,
		EventID:   uuid.NewSHA1(eventIDNamespace, []byte(traceHex+"/"+spanHex+"/start")),
		TS:        auditevent.TimestampFromTime(testStart),
		SessionID: testSession,
		Seq:       1,
		Op:        "exec",
		Phase:     auditevent.PhaseStart,
		SpanID:    spanHex,
		TraceID:   auditevent.Ptr(traceHex),
		Data:      auditevent.MustParseData(`{"command":["ls"]}`),
	}
	finish := start
	finish.EventID = uuid.NewSHA1(eventIDNamespace, []byte(traceHex+"/"+spanHex+"/finish"))
	finish.TS = auditevent.TimestampFromTime(testStart.Add(250 * time.Millisecond))
	finish.Seq = 2
	finish.Phase = auditevent.PhaseFinish
	finish.Data = auditevent.MustParseData(`{"command":["ls"],"exit_code":0}`)
	finish.OK = true
	finish.DurationMS = 250.5
	// The canonical text spells it out too, so a wrong helper cannot hide a
	// wrong mapping.
	require.Contains(t, string(auditevent.AppendJSON(nil, &finish)), `"ts":"2026-03-14T15:09:26.785897Z"`)
	return []string{string(auditevent.AppendJSON(nil, &start)), string(auditevent.AppendJSON(nil, &finish))}
}

func marshalTraces(t *testing.T, td ptrace.Traces, contentType string) []byte {
	t.Helper()
	req := ptraceotlp.NewExportRequestFromTraces(td)
	var b []byte
	var err error
	if contentType == "application/json" {
		b, err = req.MarshalJSON()
	} else {
		b, err = req.MarshalProto()
	}
	require.NoError(t, err)
	return b
}

func TestTracesIntake(t *testing.T) {
	for _, ct := range []string{"application/x-protobuf", "application/json"} {
		t.Run(ct, func(t *testing.T) {
			logs := new(consumertest.LogsSink)
			traces := new(consumertest.TracesSink)
			tr := startReceiver(t, logs, traces)

			td := sandboxTraces()
			status, hdr, body := post(t, tr.tracesURL(), ct, marshalTraces(t, td, ct))
			require.Equal(t, http.StatusOK, status, body)
			assert.Equal(t, ct, hdr.Get("Content-Type"))
			resp := ptraceotlp.NewExportResponse()
			if ct == "application/json" {
				require.NoError(t, resp.UnmarshalJSON([]byte(body)))
			} else {
				require.NoError(t, resp.UnmarshalProto([]byte(body)))
			}
			assert.Zero(t, resp.PartialSuccess().RejectedSpans())

			assert.Equal(t, wantSandboxLines(t), logBodies(logs))

			// The spans go on unchanged, the non-sandbox one too.
			require.Len(t, traces.AllTraces(), 1)
			var m ptrace.ProtoMarshaler
			want, err := m.MarshalTraces(sandboxTraces())
			require.NoError(t, err)
			got, err := m.MarshalTraces(traces.AllTraces()[0])
			require.NoError(t, err)
			assert.Equal(t, want, got)

			// A replay (the exporter retried) adds no audit records but
			// still reaches the traces pipeline, which has its own semantics.
			status, _, _ = post(t, tr.tracesURL(), ct, marshalTraces(t, sandboxTraces(), ct))
			require.Equal(t, http.StatusOK, status)
			assert.Equal(t, 2, logs.LogRecordCount())
			assert.Equal(t, 4, traces.SpanCount())
		})
	}
}

func TestTracesLogsOnlyPipeline(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil)
	status, _, body := post(t, tr.tracesURL(), "application/x-protobuf", marshalTraces(t, sandboxTraces(), "application/x-protobuf"))
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, wantSandboxLines(t), logBodies(logs))

	// A sandbox span with a malformed required attribute is rejected, and
	// the client is told so in the OTLP partial success.
	td := sandboxTraces()
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("sandbox.session.id", "nope")
	status, _, body = post(t, tr.tracesURL(), "application/x-protobuf", marshalTraces(t, td, "application/x-protobuf"))
	require.Equal(t, http.StatusOK, status)
	resp := ptraceotlp.NewExportResponse()
	require.NoError(t, resp.UnmarshalProto([]byte(body)))
	assert.Equal(t, int64(1), resp.PartialSuccess().RejectedSpans())
	assert.Contains(t, resp.PartialSuccess().ErrorMessage(), "sandbox.session.id")
	assert.Equal(t, 2, logs.LogRecordCount())
}

func TestTracesMalformed(t *testing.T) {
	logs := new(consumertest.LogsSink)
	traces := new(consumertest.TracesSink)
	tr := startReceiver(t, logs, traces)

	// The error bodies are google.rpc.Status messages in the request's
	// encoding, as OTLP/HTTP clients expect.
	status, hdr, body := post(t, tr.tracesURL(), "application/json", []byte(`{"resourceSpans":[`))
	require.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "application/json", hdr.Get("Content-Type"))
	var st spb.Status
	require.NoError(t, protojson.Unmarshal([]byte(body), &st))
	assert.Equal(t, int32(3), st.GetCode()) // INVALID_ARGUMENT
	assert.Contains(t, st.GetMessage(), "cannot decode OTLP traces request")

	status, hdr, body = post(t, tr.tracesURL(), "application/x-protobuf", []byte{0x0a, 0xff, 0xff, 0xff})
	require.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "application/x-protobuf", hdr.Get("Content-Type"))
	st.Reset()
	require.NoError(t, proto.Unmarshal([]byte(body), &st))
	assert.Equal(t, int32(3), st.GetCode())
	assert.Contains(t, st.GetMessage(), "cannot decode OTLP traces request")

	// The JSON decoder quotes the input around the error; the answer must
	// not pass that on, as it may hold attribute values such as tokens.
	secretBody := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"x","attributes":[{"key":"auth","value":{"stringValue":"SECRET-TOKEN-abcdef"}}],"traceId":12}]}]}]}`
	status, _, body = post(t, tr.tracesURL(), "application/json", []byte(secretBody))
	require.Equal(t, http.StatusBadRequest, status)
	st.Reset()
	require.NoError(t, protojson.Unmarshal([]byte(body), &st))
	assert.Contains(t, st.GetMessage(), "cannot decode OTLP traces request")
	assert.NotContains(t, body, "SECRET")
	assert.NotContains(t, body, "traceId", "no quoted input at all")

	assert.Zero(t, logs.LogRecordCount())
	assert.Zero(t, traces.SpanCount())
}

func TestTracesDownstreamRefusal(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		status     int
		retryAfter string
	}{
		{"retryable", errors.New("memory limiter"), http.StatusServiceUnavailable, "5"},
		{"permanent", consumererror.NewPermanent(errors.New("bad exporter")), http.StatusInternalServerError, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/logs", func(t *testing.T) {
			traces := new(consumertest.TracesSink)
			tr := startReceiver(t, consumertest.NewErr(tt.err), traces)
			status, hdr, _ := post(t, tr.tracesURL(), "application/json", marshalTraces(t, sandboxTraces(), "application/json"))
			assert.Equal(t, tt.status, status)
			assert.Equal(t, tt.retryAfter, hdr.Get("Retry-After"))
			assert.Zero(t, traces.SpanCount(), "the request failed as a whole")
		})
		t.Run(tt.name+"/traces", func(t *testing.T) {
			logs := new(consumertest.LogsSink)
			tr := startReceiver(t, logs, consumertest.NewErr(tt.err))
			status, hdr, body := post(t, tr.tracesURL(), "application/x-protobuf", marshalTraces(t, sandboxTraces(), "application/x-protobuf"))
			assert.Equal(t, tt.status, status)
			assert.Equal(t, tt.retryAfter, hdr.Get("Retry-After"))
			var st spb.Status
			require.NoError(t, proto.Unmarshal([]byte(body), &st))
			assert.Equal(t, map[int]int32{503: 14, 500: 13}[tt.status], st.GetCode()) // UNAVAILABLE, INTERNAL
			assert.NotContains(t, st.GetMessage(), tt.err.Error())
			// The audit records were delivered before the traces pipeline
			// refused; the client's retry must not duplicate them.
			assert.Equal(t, 2, logs.LogRecordCount())
			_, _, _ = post(t, tr.tracesURL(), "application/x-protobuf", marshalTraces(t, sandboxTraces(), "application/x-protobuf"))
			assert.Equal(t, 2, logs.LogRecordCount())
		})
	}
}

// TestTracesZeroSpanIDsAreRejected: a hand-built OTLP/JSON request that
// leaves the ids out sends sandbox spans with all-zero ids. Their event ids
// would be derived alike, so the second operation was dropped as a
// duplicate of the first after a 200; both are rejected instead, and the
// client is told why.
func TestTracesZeroSpanIDsAreRejected(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for _, op := range []string{"exec", "write"} {
		s := spans.AppendEmpty()
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(time.Millisecond)))
		s.Attributes().PutStr("sandbox.operation", op)
		s.Attributes().PutStr("sandbox.session.id", uuid.NewString())
	}
	status, _, body := post(t, tr.tracesURL(), "application/json", marshalTraces(t, td, "application/json"))
	require.Equal(t, http.StatusOK, status, body)
	resp := ptraceotlp.NewExportResponse()
	require.NoError(t, resp.UnmarshalJSON([]byte(body)))
	assert.Equal(t, int64(2), resp.PartialSuccess().RejectedSpans())
	assert.Contains(t, resp.PartialSuccess().ErrorMessage(), "span_id is all zero")
	assert.Zero(t, logs.LogRecordCount())
}
