package sandboxtrace_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

func TestSyncFinishAcknowledgesBothBeforeReturning(t *testing.T) {
	rec := newRecorder(t)
	sink := &logSink{}
	s := rec.session(t, sandboxtrace.WithLogExporter(sink), sandboxtrace.WithDelivery(sandboxtrace.DeliverySyncFinish),
		sandboxtrace.WithOutputCapture(4))
	_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"false"}, Timeout: sandboxtrace.Timeout(30 * time.Second)},
		runs(sandboxtrace.ExecResult{ExitCode: 1, Stdout: []byte("hell\no"), Stderr: []byte("no")}, nil))
	require.NoError(t, err)
	recs := sink.records()
	require.Len(t, recs, 2, "start and finish exported before Exec returned")
	fin := recs[1]
	span := rec.only(t)
	a := attrs(span)

	assert.Equal(t, "sandbox.session.finish", fin.EventName())
	assert.Equal(t, log.SeverityWarn, fin.Severity(), "ok false is WARN")
	assert.Equal(t, span.SpanContext.SpanID(), fin.SpanID())
	ev := bodyOf(t, fin)
	assert.Equal(t, auditevent.PhaseFinish, ev.Phase)
	assert.Equal(t, a["sandbox.event.finish_id"].AsString(), ev.EventID.String())
	assert.Equal(t, a["sandbox.event.finish_seq"].AsInt64(), ev.Seq)
	assert.Equal(t, a["sandbox.finish_data"].AsString(), ev.Data.String())
	assert.Equal(t, a["sandbox.duration_ms"].AsFloat64(), ev.DurationMS)
	assert.Equal(t, a["sandbox.ok"].AsBool(), ev.OK)
	assert.False(t, ev.OK)
	assert.Equal(t, span.EndTime.Truncate(time.Microsecond).UnixMicro(), ev.TS.UnixMicro())
	assert.Equal(t, span.Parent.SpanID().String(), *ev.ParentSpanID)
	assert.Nil(t, ev.ErrorType, "a non-zero exit has no error fields")
	assert.Nil(t, ev.Stdout, "output text is the collector's payload policy to write")

	raw := map[string][]byte{}
	fin.WalkAttributes(func(kv attribute.KeyValue) bool {
		if kv.Value.Type() == attribute.BYTESLICE {
			raw[string(kv.Key)] = kv.Value.AsByteSlice()
		}
		return true
	})
	assert.Equal(t, "hell\u2026", string(raw["sandbox.exec.stdout_bytes"]), "raw output, cut as the span's")
	assert.Equal(t, "no", string(raw["sandbox.exec.stderr_bytes"]))
	require.NoError(t, s.Shutdown(context.Background()))
}

func TestSyncFinishRecordsTheErrorFields(t *testing.T) {
	rec := newRecorder(t)
	sink := &logSink{}
	s := rec.session(t, sandboxtrace.WithLogExporter(sink), sandboxtrace.WithDelivery(sandboxtrace.DeliverySyncFinish))
	err := s.Read(context.Background(), "/w/missing", nil, func(context.Context) error {
		return sandboxtrace.WorkspaceReadNotFound("/w/missing", errors.New("ENOENT"))
	})
	require.Error(t, err)
	a := attrs(rec.only(t))
	ev := bodyOf(t, sink.records()[1])
	assert.Equal(t, a["sandbox.error.code"].AsString(), *ev.ErrorCode)
	assert.Equal(t, a["error.type"].AsString(), *ev.ErrorType)
	assert.Equal(t, a["sandbox.error.message"].AsString(), *ev.ErrorMessage)
	assert.Equal(t, a["sandbox.error.retryable"].AsBool(), *ev.ErrorRetryable)
	assert.Equal(t, a["sandbox.start_data"].AsString(), ev.Data.String(), "a failed operation's finish data is its start data")
}

// failingAfter exports the first n batches, then fails.
type failingAfter struct {
	logSink
	n int
}

func (f *failingAfter) Export(ctx context.Context, recs []sdklog.Record) error {
	if f.n == 0 {
		return errors.New("connection reset")
	}
	f.n--
	return f.logSink.Export(ctx, recs)
}

func TestSyncFinishNotAcknowledgedIsAnError(t *testing.T) {
	rec := newRecorder(t)
	sink := &failingAfter{n: 1}
	s := rec.session(t, sandboxtrace.WithLogExporter(sink), sandboxtrace.WithDelivery(sandboxtrace.DeliverySyncFinish))
	ran := false
	err := s.Stop(context.Background(), func(context.Context) error { ran = true; return nil })
	assert.True(t, ran, "the start was acknowledged, so the operation ran")
	require.ErrorIs(t, err, sandboxtrace.ErrFinishNotRecorded)
	assert.ErrorContains(t, err, "connection reset")
	assert.Len(t, rec.ops(), 1, "the span still carries the finish")
}

func TestSyncDeliveryLeavesTheFinishToTheSpan(t *testing.T) {
	rec := newRecorder(t)
	sink := &logSink{}
	s := rec.session(t, sandboxtrace.WithLogExporter(sink), sandboxtrace.WithDelivery(sandboxtrace.DeliverySync))
	require.NoError(t, s.Stop(context.Background(), nothing))
	assert.Len(t, sink.records(), 1, "sync: the start only")
}

func TestParseDelivery(t *testing.T) {
	for _, d := range []sandboxtrace.Delivery{sandboxtrace.DeliveryBestEffort, sandboxtrace.DeliverySync, sandboxtrace.DeliverySyncFinish} {
		got, err := sandboxtrace.ParseDelivery(d.String())
		require.NoError(t, err)
		assert.Equal(t, d, got)
	}
	_, err := sandboxtrace.ParseDelivery("always")
	assert.ErrorContains(t, err, "want best_effort, sync or sync_finish")
}

// A provider that records nothing (the global default, a no-op) gives the
// operation no span ids; the start and finish records must still name one
// span, or the trail shows an open operation and a finish without a start.
// The id is shaped as the Python SDK's without a span: sandbox_op_<hex>.
func TestSyncFinishWithoutSpansPairsStartAndFinish(t *testing.T) {
	sink := &logSink{}
	s, err := sandboxtrace.NewSession(context.Background(), noop.NewTracerProvider(),
		sandboxtrace.WithLogExporter(sink), sandboxtrace.WithDelivery(sandboxtrace.DeliverySyncFinish))
	require.NoError(t, err)
	require.NoError(t, s.Read(context.Background(), "/w/a", nil, nothing))
	require.NoError(t, s.Shutdown(context.Background()))
	recs := sink.records()
	require.Len(t, recs, 2)
	start, fin := bodyOf(t, recs[0]), bodyOf(t, recs[1])
	require.Equal(t, auditevent.PhaseStart, start.Phase)
	require.Equal(t, auditevent.PhaseFinish, fin.Phase)
	assert.NotEmpty(t, start.SpanID)
	assert.Equal(t, start.SpanID, fin.SpanID, "start and finish of one operation")
	assert.Regexp(t, `^sandbox_op_[0-9a-f]{32}$`, start.SpanID)
	assert.Nil(t, start.TraceID)
}

// A no-op provider under a caller's span hands every operation the caller's
// span context. Taken as the operation's own, each operation's records would
// name the caller's span as both span and parent, and all the session's
// operations one span, which the Python SDK never writes: they name no span.
func TestSyncFinishUnderACallersSpanWithoutSpansNamesNoSpan(t *testing.T) {
	caller := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true}))
	sink := &logSink{}
	s, err := sandboxtrace.NewSession(caller, noop.NewTracerProvider(),
		sandboxtrace.WithLogExporter(sink), sandboxtrace.WithDelivery(sandboxtrace.DeliverySyncFinish))
	require.NoError(t, err)
	require.NoError(t, s.Read(caller, "/w/a", nil, nothing))
	require.NoError(t, s.Read(caller, "/w/b", nil, nothing))
	require.NoError(t, s.Shutdown(context.Background()))
	recs := sink.records()
	require.Len(t, recs, 4)
	var ids []string
	for _, r := range recs {
		ev := bodyOf(t, r)
		assert.Regexp(t, `^sandbox_op_[0-9a-f]{32}$`, ev.SpanID)
		assert.Nil(t, ev.TraceID)
		assert.Nil(t, ev.ParentSpanID)
		assert.False(t, r.SpanID().IsValid(), "the record names the span its body names: none")
		ids = append(ids, ev.SpanID)
	}
	assert.Equal(t, ids[0], ids[1], "start and finish of one operation")
	assert.Equal(t, ids[2], ids[3])
	assert.NotEqual(t, ids[0], ids[2], "two operations, two ids")
}

// A provider shut down before the session began hands out no-op tracers:
// under a caller's span, its operations name no span either, not the
// caller's.
func TestSyncFinishOnAShutDownProviderUnderACallersSpanNamesNoSpan(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	require.NoError(t, tp.Shutdown(context.Background()))
	caller := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true}))
	sink := &logSink{}
	s, err := sandboxtrace.NewSession(caller, tp,
		sandboxtrace.WithLogExporter(sink), sandboxtrace.WithDelivery(sandboxtrace.DeliverySyncFinish))
	require.NoError(t, err)
	require.NoError(t, s.Read(caller, "/w/a", nil, nothing))
	require.NoError(t, s.Shutdown(context.Background()))
	recs := sink.records()
	require.Len(t, recs, 2)
	start, fin := bodyOf(t, recs[0]), bodyOf(t, recs[1])
	assert.Regexp(t, `^sandbox_op_[0-9a-f]{32}$`, start.SpanID)
	assert.Equal(t, start.SpanID, fin.SpanID)
	assert.Nil(t, start.ParentSpanID)
	assert.Nil(t, fin.TraceID)
}
