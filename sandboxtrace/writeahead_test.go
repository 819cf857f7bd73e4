package sandboxtrace_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// logSink is a log exporter keeping what it exports. With fail set every
// export fails; with hold set exports wait for hold to close (or ctx).
type logSink struct {
	mu   sync.Mutex
	recs []sdklog.Record
	fail error
	hold chan struct{} // exports wait for it to close (or their context)
	shut atomic.Int32  // Shutdown calls
}

func (l *logSink) Export(ctx context.Context, recs []sdklog.Record) error {
	if l.hold != nil {
		select {
		case <-l.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if l.fail != nil {
		return l.fail
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range recs {
		l.recs = append(l.recs, recs[i].Clone())
	}
	return nil
}

func (l *logSink) Shutdown(context.Context) error   { l.shut.Add(1); return nil }
func (l *logSink) ForceFlush(context.Context) error { return nil }

func (l *logSink) records() []sdklog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]sdklog.Record(nil), l.recs...)
}

// bodyOf decodes a record's body as an audit event.
func bodyOf(t *testing.T, r sdklog.Record) auditevent.Event {
	t.Helper()
	ev, err := auditevent.Decode([]byte(r.Body().AsString()))
	require.NoError(t, err)
	return ev
}

func TestWriteAheadRecordPrecedesTheFunction(t *testing.T) {
	rec := newRecorder(t)
	sink := &logSink{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(sink)))
	s := rec.session(t, sandboxtrace.WithLoggerProvider(lp), sandboxtrace.WithBackend("docker"))

	var seenInFn int
	err := s.Do(context.Background(), "read", map[string]any{"path": "/w/a", "user": "agent", "n": 3.0},
		func(context.Context, *sandboxtrace.Op) error {
			seenInFn = len(sink.records())
			return nil
		})
	require.NoError(t, err)
	require.Equal(t, 1, seenInFn, "the start record is emitted before the function runs")

	r := sink.records()[0]
	span := rec.only(t)
	a := attrs(span)
	assert.Equal(t, "sandbox.session.start", r.EventName())
	assert.Equal(t, log.SeverityInfo, r.Severity())
	assert.Equal(t, span.SpanContext.TraceID(), r.TraceID())
	assert.Equal(t, span.SpanContext.SpanID(), r.SpanID())

	got := map[string]any{}
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		got[string(kv.Key)] = kv.Value.AsInterface()
		return true
	})
	assert.Equal(t, map[string]any{
		"sandbox.session.id":  s.ID().String(),
		"sandbox.operation":   "read",
		"sandbox.event.phase": "start",
		"sandbox.event.seq":   int64(1),
	}, got)

	// The body is the canonical start line of the event the span maps to.
	ev := bodyOf(t, r)
	assert.Equal(t, a["sandbox.event.start_id"].AsString(), ev.EventID.String(), "span start_id = record event_id")
	assert.Equal(t, auditevent.PhaseStart, ev.Phase)
	assert.Equal(t, int64(1), ev.Seq)
	assert.Equal(t, span.SpanContext.SpanID().String(), ev.SpanID)
	assert.Equal(t, span.SpanContext.TraceID().String(), *ev.TraceID)
	assert.Equal(t, span.Parent.SpanID().String(), *ev.ParentSpanID)
	assert.Equal(t, span.StartTime.Truncate(time.Microsecond).UnixMicro(), ev.TS.UnixMicro())
	assert.Equal(t, a["sandbox.start_data"].AsString(), ev.Data.String())
	assert.Equal(t, `{"n":3.0,"path":"/w/a","user":"agent"}`, ev.Data.String())
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Body().AsString()), &raw))
	assert.NotContains(t, raw, "ok", "a start line has only the common fields")
}

func TestSyncDeliveryAcknowledgesBeforeTheFunction(t *testing.T) {
	rec := newRecorder(t)
	sink := &logSink{}
	s := rec.session(t, sandboxtrace.WithLogExporter(sink), sandboxtrace.WithDelivery(sandboxtrace.DeliverySync))
	var exportedBefore int
	require.NoError(t, s.Do(context.Background(), "start", nil, func(context.Context, *sandboxtrace.Op) error {
		exportedBefore = len(sink.records())
		return nil
	}))
	assert.Equal(t, 1, exportedBefore, "sync: exported, not only queued, when the function runs")
	require.NoError(t, s.Shutdown(context.Background()))
}

func TestSyncDeliveryFailsClosed(t *testing.T) {
	tests := []struct {
		name    string
		sink    *logSink
		timeout time.Duration
		want    error
	}{
		{"export error", &logSink{fail: errors.New("connection refused")}, time.Second, nil},
		{"timeout", &logSink{hold: make(chan struct{})}, 20 * time.Millisecond, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t)
			s := rec.session(t, sandboxtrace.WithLogExporter(tt.sink),
				sandboxtrace.WithDelivery(sandboxtrace.DeliverySync), sandboxtrace.WithSyncTimeout(tt.timeout))
			called := false
			_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"rm", "-rf", "/"}},
				func(context.Context) (sandboxtrace.ExecResult, error) {
					called = true
					return sandboxtrace.ExecResult{}, nil
				})
			require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
			}
			assert.False(t, called, "fail closed: the function never runs")
			s.End()
			assert.Empty(t, rec.ops(), "nothing is recorded as having run")
		})
	}
}

func TestWriteAheadOptionErrors(t *testing.T) {
	rec := newRecorder(t)
	lp := sdklog.NewLoggerProvider()
	for name, opts := range map[string][]sandboxtrace.Option{
		"sync without exporter": {sandboxtrace.WithDelivery(sandboxtrace.DeliverySync)},
		"both":                  {sandboxtrace.WithLoggerProvider(lp), sandboxtrace.WithLogExporter(&logSink{})},
		"unknown delivery":      {sandboxtrace.WithLogExporter(&logSink{}), sandboxtrace.WithDelivery(7)},
	} {
		_, err := sandboxtrace.NewSession(context.Background(), rec.tp, opts...)
		assert.Error(t, err, name)
	}
	_, err := sandboxtrace.ParseDelivery("eventually")
	assert.ErrorContains(t, err, `"eventually"`)
	d, err := sandboxtrace.ParseDelivery("sync")
	require.NoError(t, err)
	assert.Equal(t, sandboxtrace.DeliverySync, d)
}

func TestBestEffortDeliveryQueuesAndFlushesOnShutdown(t *testing.T) {
	rec := newRecorder(t)
	sink := &logSink{hold: make(chan struct{})}
	s := rec.session(t, sandboxtrace.WithLogExporter(sink))
	ran := false
	require.NoError(t, s.Do(context.Background(), "stop", nil, func(context.Context, *sandboxtrace.Op) error {
		ran = true
		return nil
	}))
	assert.True(t, ran, "best effort: the operation runs while the export is stuck")
	close(sink.hold)
	require.NoError(t, s.Shutdown(context.Background()))
	require.Len(t, sink.records(), 1)
	assert.Equal(t, "stop", bodyOf(t, sink.records()[0]).Op)
}
