package sandboxtrace_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// Ending Op.Span() before Finish used to export the span without its
// finish attributes: a failed operation was written ok:true. The early
// End is ignored and reported; Finish records the outcome.
func TestSpanEndBeforeFinishKeepsTheOutcome(t *testing.T) {
	h := catchOTelErrors(t)
	rec := newRecorder(t)
	s := rec.session(t)
	_, o, err := s.Start(context.Background(), "apply_patch", map[string]any{"path": "a"})
	require.NoError(t, err)
	o.Span().End()
	require.Empty(t, rec.ops(), "the span must not end before Finish")

	require.NoError(t, o.Finish(sandboxtrace.FinishOptions{Err: sandboxtrace.NewError("apply_patch_invalid_diff", "bad diff", nil, nil)}))
	o.Span().End() // after Finish: nothing to report
	sp := rec.only(t)
	a := attrs(sp)
	assert.False(t, a[semconv.AttrOK].AsBool())
	assert.Equal(t, "apply_patch_invalid_diff", a[semconv.AttrErrorCode].AsString())
	assert.Equal(t, codes.Error, sp.Status.Code)

	errs := h.all()
	require.Len(t, errs, 1)
	assert.True(t, strings.Contains(errs[0].Error(), "apply_patch: Op.Span().End() before Finish is ignored"), errs[0].Error())
}

// The span in the ctx an operation runs with is the operation's span as
// Op.Span hands it out: a habitual `defer trace.SpanFromContext(ctx).End()`
// in the function cannot export it without its outcome either, and a child
// span started from that ctx still nests under it.
func TestContextSpanEndBeforeFinishKeepsTheOutcome(t *testing.T) {
	h := catchOTelErrors(t)
	rec := newRecorder(t)
	s := rec.session(t)
	var child trace.SpanContext
	err := s.Do(context.Background(), "exec", nil, func(ctx context.Context, _ *sandboxtrace.Op) error {
		defer trace.SpanFromContext(ctx).End()
		_, c := rec.tp.Tracer("test").Start(ctx, "child")
		child = c.SpanContext()
		c.End()
		return sandboxtrace.ExecTimeout(nil)
	})
	require.Error(t, err)
	sp := rec.only(t)
	a := attrs(sp)
	assert.False(t, a[semconv.AttrOK].AsBool(), "the span ended with its outcome")
	assert.Equal(t, "exec_timeout", a[semconv.AttrErrorCode].AsString())
	assert.Equal(t, codes.Error, sp.Status.Code)
	var parent trace.SpanID
	for _, got := range rec.exp.GetSpans() {
		if got.SpanContext.SpanID() == child.SpanID() {
			parent = got.Parent.SpanID()
		}
	}
	assert.Equal(t, sp.SpanContext.SpanID(), parent, "the child nests under the operation")
	assert.Len(t, h.all(), 1, "the early End is reported")
}

// slowLogs acknowledges each export after delay.
type slowLogs struct {
	logSink
	delay time.Duration
}

func (l *slowLogs) Export(ctx context.Context, recs []sdklog.Record) error {
	time.Sleep(l.delay)
	return l.logSink.Export(ctx, recs)
}

// With sync delivery, duration_ms is the operation's run time: it used to
// include the start event's round trip, which the reference's does not
// (its t0 is taken after the start event is emitted). In a synctest
// bubble the exporter's sleep is the only time that passes.
func TestSyncDurationExcludesTheStartEventsRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder(t)
		exp := &slowLogs{delay: 200 * time.Millisecond}
		s := rec.session(t, sandboxtrace.WithLogExporter(exp), sandboxtrace.WithDelivery(sandboxtrace.DeliverySync))
		require.NoError(t, s.Do(context.Background(), "read", nil, func(context.Context, *sandboxtrace.Op) error {
			time.Sleep(50 * time.Millisecond)
			return nil
		}))
		sp := rec.only(t)
		assert.Equal(t, 50.0, attrs(sp)[semconv.AttrDurationMS].AsFloat64())
		assert.Equal(t, 250*time.Millisecond, sp.EndTime.Sub(sp.StartTime), "the span (and start ts) still covers the emission")
		require.NoError(t, s.Shutdown(context.Background()))
	})
}
