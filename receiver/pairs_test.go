package sandboxauditreceiver

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// allSpans returns every span the sink holds, in order.
func allSpans(sink *consumertest.TracesSink) []ptrace.Span {
	var out []ptrace.Span
	for _, td := range sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			sss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				for k := 0; k < sss.At(j).Spans().Len(); k++ {
					out = append(out, sss.At(j).Spans().At(k))
				}
			}
		}
	}
	return out
}

func attrStr(t *testing.T, s ptrace.Span, key string) string {
	t.Helper()
	v, ok := s.Attributes().Get(key)
	require.True(t, ok, "span %s has no %s", s.Name(), key)
	return v.AsString()
}

func hasTrueAttr(s ptrace.Span, key string) bool {
	v, ok := s.Attributes().Get(key)
	return ok && v.Type() == pcommon.ValueTypeBool && v.Bool()
}

var (
	evStart  = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)
	evFinish = time.Date(2026, 3, 14, 15, 9, 26, 786022000, time.UTC)
)

func TestPairingIntoTraces(t *testing.T) {
	logs := new(consumertest.LogsSink)
	traces := new(consumertest.TracesSink)
	tr := startReceiver(t, logs, traces)

	// A pair in one batch, and a pair split over two requests.
	status, _, body := post(t, tr.eventsURL(), "application/x-ndjson", []byte(startJSON(1)+"\n"+finishJSON(1)+"\n"+startJSON(2)+"\n"))
	require.Equal(t, http.StatusOK, status, body)
	status, _, body = post(t, tr.eventsURL(), "application/json", []byte(finishJSON(2)))
	require.Equal(t, http.StatusOK, status, body)

	spans := allSpans(traces)
	require.Len(t, spans, 2)
	for i, s := range spans {
		n := i + 1
		assert.Equal(t, "sandbox.exec", s.Name())
		assert.Equal(t, ptrace.SpanKindInternal, s.Kind())
		// Events with non-OTel ids are one trace per session, the session
		// UUID's bytes.
		assert.Equal(t, pcommon.TraceID(testSession), s.TraceID())
		assert.Equal(t, evStart, s.StartTimestamp().AsTime())
		assert.Equal(t, evFinish, s.EndTimestamp().AsTime())
		assert.Equal(t, "exec", attrStr(t, s, "sandbox.operation"))
		assert.Equal(t, testSession.String(), attrStr(t, s, "sandbox.session.id"))
		assert.Equal(t, sessionEventID(testSession, n, "start").String(), attrStr(t, s, "sandbox.event.start_id"))
		assert.Equal(t, sessionEventID(testSession, n, "finish").String(), attrStr(t, s, "sandbox.event.finish_id"))
		assert.False(t, hasTrueAttr(s, "sandbox.incomplete"))
	}
	assert.NotEqual(t, spans[0].SpanID(), spans[1].SpanID())
	assert.Equal(t, 4, logs.LogRecordCount())
	assert.Zero(t, tr.r.pairs.Len())

	// Each span maps back to the same two events.
	assert.Equal(t, []string{
		canonical(t, startJSON(1)), canonical(t, finishJSON(1)),
		canonical(t, startJSON(2)), canonical(t, finishJSON(2)),
	}, spanLines(t, traces))
}

// spanLines maps the sink's spans back to events, as the exporter would,
// and returns their canonical lines (without newline).
func spanLines(t *testing.T, sink *consumertest.TracesSink) []string {
	t.Helper()
	var out []string
	m := spanmap.NewMapper(0)
	for _, td := range sink.AllTraces() {
		events, st := m.AppendTraces(nil, td)
		require.Zero(t, st.Invalid, st.FirstInvalid)
		for i := range events {
			out = append(out, string(auditevent.AppendJSON(nil, &events[i])))
		}
	}
	return out
}

// A finish that cannot share its start's span (here: another version, or a
// parent the start lacks) makes a span of its own, so both lines come back
// as they were posted instead of the finish taking the start's fields.
func TestPairingMismatchedFinish(t *testing.T) {
	set, tel := recordingSettings(t)
	traces := new(consumertest.TracesSink)
	tr := startReceiverWith(t, set, nil, traces, func(*Config) {})

	otherVersion := strings.Replace(finishJSON(1), `"version":1`, `"version":2`, 1)
	withParent := strings.Replace(finishJSON(2), `"parent_span_id":null`, `"parent_span_id":"sandbox_op_0"`, 1)
	require.NotEqual(t, finishJSON(1), otherVersion)
	require.NotEqual(t, finishJSON(2), withParent)
	body := startJSON(1) + "\n" + otherVersion + "\n" + startJSON(2) + "\n" + withParent + "\n"
	status, _, resp := post(t, tr.eventsURL(), "application/x-ndjson", []byte(body))
	require.Equal(t, http.StatusOK, status, resp)

	assert.Equal(t, []string{
		canonical(t, startJSON(1)), canonical(t, otherVersion),
		canonical(t, startJSON(2)), canonical(t, withParent),
	}, spanLines(t, traces))
	spans := allSpans(traces)
	require.Len(t, spans, 4)
	assert.True(t, hasTrueAttr(spans[0], "sandbox.incomplete"))
	assert.True(t, hasTrueAttr(spans[1], "sandbox.event.start_missing"))

	assert.Equal(t, map[string]int64{"mismatched": 2}, givenUp(t, tel))
}

func TestPairingFinishWithoutStart(t *testing.T) {
	traces := new(consumertest.TracesSink)
	tr := startReceiver(t, nil, traces)
	status, _, body := post(t, tr.eventsURL(), "application/json", []byte(finishJSON(7)))
	require.Equal(t, http.StatusOK, status, body)

	spans := allSpans(traces)
	require.Len(t, spans, 1)
	s := spans[0]
	assert.True(t, hasTrueAttr(s, "sandbox.event.start_missing"))
	assert.Equal(t, evFinish, s.EndTimestamp().AsTime())
	// From its own ts and duration_ms (250.125 ms).
	assert.Equal(t, evFinish.Add(-250125*time.Microsecond), s.StartTimestamp().AsTime())
	assert.Equal(t, []string{canonical(t, finishJSON(7))}, spanLines(t, traces))
}

func TestPairingTimeoutAndMetrics(t *testing.T) {
	set, tel := recordingSettings(t)

	traces := new(consumertest.TracesSink)
	tr := startReceiverWith(t, set, nil, traces, func(c *Config) {
		c.PendingTimeout = 50 * time.Millisecond
		c.SweepInterval = 10 * time.Millisecond
	})
	status, _, body := post(t, tr.eventsURL(), "application/json", []byte(startJSON(1)))
	require.Equal(t, http.StatusOK, status, body)

	require.Eventually(t, func() bool { return traces.SpanCount() == 1 }, 10*time.Second, 10*time.Millisecond)
	s := allSpans(traces)[0]
	assert.True(t, hasTrueAttr(s, "sandbox.incomplete"))
	assert.Equal(t, evStart, s.StartTimestamp().AsTime())
	assert.Equal(t, evStart, s.EndTimestamp().AsTime(), "an incomplete span ends at its start")
	assert.Zero(t, tr.r.pairs.Len())
	assert.Equal(t, []string{canonical(t, startJSON(1))}, spanLines(t, traces))

	assert.Equal(t, map[string]int64{"timeout": 1}, givenUp(t, tel))

	// The finish that comes too late is a span of its own.
	status, _, _ = post(t, tr.eventsURL(), "application/json", []byte(finishJSON(1)))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, 2, traces.SpanCount())
	assert.True(t, hasTrueAttr(allSpans(traces)[1], "sandbox.event.start_missing"))
}

func TestPairingMaxPendingAndGauge(t *testing.T) {
	set, tel := recordingSettings(t)

	traces := new(consumertest.TracesSink)
	tr := startReceiverWith(t, set, nil, traces, func(c *Config) { c.MaxPending = 2 })
	batch := startJSON(1) + "\n" + startJSON(2) + "\n" + startJSON(3) + "\n"
	status, _, body := post(t, tr.eventsURL(), "application/x-ndjson", []byte(batch))
	require.Equal(t, http.StatusOK, status, body)

	// The oldest start made room and became an incomplete span.
	require.Equal(t, 1, traces.SpanCount())
	s := allSpans(traces)[0]
	assert.True(t, hasTrueAttr(s, "sandbox.incomplete"))
	assert.Equal(t, sessionEventID(testSession, 1, "start").String(), attrStr(t, s, "sandbox.event.start_id"))
	assert.Equal(t, 2, tr.r.pairs.Len())

	m, err := tel.GetMetric("otelcol_sandboxaudit_receiver_pairs_pending")
	require.NoError(t, err)
	g := m.Data.(metricdata.Gauge[int64])
	require.Len(t, g.DataPoints, 1)
	assert.Equal(t, int64(2), g.DataPoints[0].Value)
}

// TestPairingGiveUpReasons checks that a start replaced by another start of
// the same operation and a start pushed out by max_pending are counted
// under their own reasons.
func TestPairingGiveUpReasons(t *testing.T) {
	set, tel := recordingSettings(t)

	traces := new(consumertest.TracesSink)
	tr := startReceiverWith(t, set, nil, traces, func(c *Config) { c.MaxPending = 2 })

	// A second start of operation 1 (same session and span_id, another
	// event id, as a client that restarted the operation would send).
	firstID := sessionEventID(testSession, 1, "start").String()
	againID := "7d3e5f10-2b4c-4d6e-8f01-23456789abcd"
	again := strings.Replace(startJSON(1), firstID, againID, 1)
	require.NotEqual(t, startJSON(1), again)

	// Request 1: start 1, then its replacement. Request 2: starts 2 and 3;
	// start 3 finds the table full and pushes out the oldest, the
	// replacement.
	status, _, body := post(t, tr.eventsURL(), "application/x-ndjson", []byte(startJSON(1)+"\n"+again+"\n"))
	require.Equal(t, http.StatusOK, status, body)
	status, _, body = post(t, tr.eventsURL(), "application/x-ndjson", []byte(startJSON(2)+"\n"+startJSON(3)+"\n"))
	require.Equal(t, http.StatusOK, status, body)

	spans := allSpans(traces)
	require.Len(t, spans, 2)
	for _, s := range spans {
		assert.True(t, hasTrueAttr(s, "sandbox.incomplete"))
	}
	assert.Equal(t, firstID, attrStr(t, spans[0], "sandbox.event.start_id"), "the replaced start")
	assert.Equal(t, againID, attrStr(t, spans[1], "sandbox.event.start_id"), "the evicted start")
	assert.Equal(t, 2, tr.r.pairs.Len())

	assert.Equal(t, map[string]int64{"replaced": 1, "evicted": 1}, givenUp(t, tel))
}

func TestShutdownFlushesPending(t *testing.T) {
	traces := new(consumertest.TracesSink)
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	rcv, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, traces)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
	url := "http://" + unwrap(rcv).addr.String() + cfg.EventsPath

	other := uuid.MustParse("0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e")
	batch := startJSON(1) + "\n" + sessionStartJSON(other, 1) + "\n"
	status, _, body := post(t, url, "application/x-ndjson", []byte(batch))
	require.Equal(t, http.StatusOK, status, body)
	require.Zero(t, traces.SpanCount())

	require.NoError(t, rcv.Shutdown(context.Background()))
	spans := allSpans(traces)
	require.Len(t, spans, 2)
	for _, s := range spans {
		assert.True(t, hasTrueAttr(s, "sandbox.incomplete"))
	}
	assert.Equal(t, testSession.String(), attrStr(t, spans[0], "sandbox.session.id"), "oldest first")
}

func TestSharedServerForLogsAndTraces(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	set := receivertest.NewNopSettings(metadata.Type)
	ctx := context.Background()
	l, err := f.CreateLogs(ctx, set, cfg, new(consumertest.LogsSink))
	require.NoError(t, err)
	tc, err := f.CreateTraces(ctx, set, cfg, new(consumertest.TracesSink))
	require.NoError(t, err)
	assert.Same(t, unwrap(l), unwrap(tc), "one receiver, one server per configured component")

	// Another component (the collector gives each its own *Config), or
	// another factory, gets its own.
	named := set
	named.ID = component.NewIDWithName(metadata.Type, "second")
	cfg2 := *cfg
	l2, err := f.CreateLogs(ctx, named, &cfg2, new(consumertest.LogsSink))
	require.NoError(t, err)
	assert.NotSame(t, unwrap(l), unwrap(l2))
	l3, err := NewFactory().CreateLogs(ctx, set, cfg, new(consumertest.LogsSink))
	require.NoError(t, err)
	assert.NotSame(t, unwrap(l), unwrap(l3))

	// Both pipelines start and shut down the one server; after shutdown the
	// ID can be created afresh (a collector reload).
	host := componenttest.NewNopHost()
	require.NoError(t, l.Start(ctx, host))
	require.NoError(t, tc.Start(ctx, host))
	require.NoError(t, l.Shutdown(ctx))
	require.NoError(t, tc.Shutdown(ctx))
	l4, err := f.CreateLogs(ctx, set, cfg, new(consumertest.LogsSink))
	require.NoError(t, err)
	assert.NotSame(t, unwrap(l), unwrap(l4))
	for _, c := range []component.Component{l2, l3, l4} {
		require.NoError(t, c.Shutdown(ctx))
	}
}

func TestPairingTracesOnlyRefusal(t *testing.T) {
	tr := startReceiver(t, nil, consumertest.NewErr(errors.New("queue full")))
	// With no logs pipeline the spans are the primary output: their refusal
	// is the client's answer, and the ids are not remembered.
	batch := []byte(startJSON(1) + "\n" + finishJSON(1) + "\n")
	status, hdr, _ := post(t, tr.eventsURL(), "application/x-ndjson", batch)
	require.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "5", hdr.Get("Retry-After"))
	status, _, _ = post(t, tr.eventsURL(), "application/x-ndjson", batch)
	require.Equal(t, http.StatusServiceUnavailable, status, "not dropped as a duplicate")
}

func TestPairingLogsAcceptedTracesRefused(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, consumertest.NewErr(errors.New("queue full")))
	// The audit records are delivered; the derived spans are lost, counted,
	// and do not fail the request (a retry could not restore them).
	status, _, body := post(t, tr.eventsURL(), "application/x-ndjson", []byte(startJSON(1)+"\n"+finishJSON(1)+"\n"))
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, 2, logs.LogRecordCount())
}
