package sandboxtrace_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// requireUTF8 requires every string on the spans to be UTF-8: OTLP's
// protobuf refuses one that is not, and the whole export batch is lost.
func requireUTF8(t *testing.T, spans tracetest.SpanStubs) {
	t.Helper()
	for _, s := range spans {
		assert.True(t, utf8.ValidString(s.Status.Description), "status of %s", s.Name)
		for _, kv := range s.Attributes {
			if kv.Value.Type() == attribute.STRING {
				assert.True(t, utf8.ValidString(kv.Value.AsString()), "%s of %s", kv.Key, s.Name)
			}
		}
	}
}

// An OS error quoting a path that is not UTF-8, and such a backend name:
// each bad byte becomes U+FFFD, as the canonical encoder writes it.
func TestTextThatIsNotUTF8IsMadeValid(t *testing.T) {
	rec := newRecorder(t)
	s := rec.session(t, sandboxtrace.WithBackend("box\xff"))
	err := s.Read(context.Background(), "/w/\xff\xfe", nil, func(context.Context) error {
		return errors.New("open /w/\xff\xfe: no such file or directory")
	})
	require.Error(t, err)
	s.End()
	requireUTF8(t, rec.exp.GetSpans())
	a := attrs(rec.only(t))
	assert.Equal(t, "open /w/\uFFFD\uFFFD: no such file or directory", a["sandbox.error.message"].AsString())
	assert.Equal(t, "box\uFFFD", a["sandbox.backend"].AsString())
}

// panicky is an error whose Error method panics, as a caller's type with a
// nil field can.
type panicky struct{ p *string }

func (e panicky) Error() string { return *e.p }

// Errors that cannot describe themselves: a typed nil *Error returned as an
// error (a classic Go slip), one wrapped in an *Error, and an Error method
// that panics. Each is a failure; Finish must not panic and the span must
// end.
func TestErrorsThatCannotDescribeThemselves(t *testing.T) {
	var typedNil *sandboxtrace.Error
	for name, c := range map[string]struct {
		err      error
		typ, msg string
	}{
		"typed nil":         {typedNil, "SandboxError", "sandbox error"},
		"wrapped typed nil": {&sandboxtrace.Error{Code: "exec_timeout", Err: typedNil}, "ExecTimeoutError", "sandbox error"},
		"Error panics":      {panicky{}, "panicky", ""},
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder(t)
			s := rec.session(t)
			err := s.Read(context.Background(), "/x", nil, func(context.Context) error { return c.err })
			require.Error(t, err)
			a := attrs(rec.only(t))
			assert.False(t, a["sandbox.ok"].AsBool())
			assert.Equal(t, c.typ, a["error.type"].AsString())
			assert.Equal(t, c.msg, a["sandbox.error.message"].AsString())
		})
	}
}

// runtime.Goexit in the function (t.FailNow does it) recovers nothing, but
// the operation did not complete: its span still ends, not ok.
func TestGoexitEndsTheSpan(t *testing.T) {
	rec := newRecorder(t)
	s := rec.session(t)
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = s.Read(context.Background(), "/x", nil, func(context.Context) error {
			runtime.Goexit()
			return nil
		})
	})
	wg.Wait()
	a := attrs(rec.only(t))
	assert.False(t, a["sandbox.ok"].AsBool())
	assert.Equal(t, "Goexit", a["error.type"].AsString())
}

// stubbornLogs ignores ctx: it returns only when released (or after a
// bound, so the test cannot hang).
type stubbornLogs struct {
	release  chan struct{}
	returned atomic.Bool
	shut     atomic.Int32
}

func (s *stubbornLogs) Export(context.Context, []sdklog.Record) error {
	select {
	case <-s.release:
	case <-time.After(10 * time.Second):
	}
	s.returned.Store(true)
	return nil
}
func (s *stubbornLogs) Shutdown(context.Context) error   { s.shut.Add(1); return nil }
func (s *stubbornLogs) ForceFlush(context.Context) error { return nil }

// The sync timeout bounds the wait even for an exporter that ignores its
// context: the operation fails closed while the export is still running.
func TestSyncTimeoutBoundsAStubbornExporter(t *testing.T) {
	exp := &stubbornLogs{release: make(chan struct{})}
	defer close(exp.release)
	rec := newRecorder(t)
	s := rec.session(t, sandboxtrace.WithLogExporter(exp),
		sandboxtrace.WithDelivery(sandboxtrace.DeliverySync), sandboxtrace.WithSyncTimeout(20*time.Millisecond))
	called := false
	err := s.Read(context.Background(), "/x", nil, func(context.Context) error { called = true; return nil })
	require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.False(t, exp.returned.Load(), "Read waited for the exporter")
	assert.False(t, called)
}

// A context cancelled before the operation sends nothing: no start line
// for an operation that never ran.
func TestSyncWithCancelledContextSendsNothing(t *testing.T) {
	sink := &logSink{}
	rec := newRecorder(t)
	s := rec.session(t, sandboxtrace.WithLogExporter(sink), sandboxtrace.WithDelivery(sandboxtrace.DeliverySync))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err := s.Read(ctx, "/x", nil, func(context.Context) error { called = true; return nil })
	require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
	assert.False(t, called)
	assert.Empty(t, sink.records())
}

// A caller's deadline that ends the wait is named as such, not as the
// session's sync timeout, which did not pass.
func TestSyncWithExpiredCallerDeadlineSaysSo(t *testing.T) {
	rec := newRecorder(t)
	s := rec.session(t, sandboxtrace.WithLogExporter(&logSink{}),
		sandboxtrace.WithDelivery(sandboxtrace.DeliverySync), sandboxtrace.WithSyncTimeout(time.Hour))
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	err := s.Read(ctx, "/x", nil, nothing)
	require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotContains(t, err.Error(), "sync timeout")
	assert.Contains(t, err.Error(), "the operation's context ended")
}

// A best-effort record emitted after the log pipeline is shut down never
// reaches a processor (the SDK drops it first); it is counted and reported,
// for the session's own pipeline and for a caller's NewLogProcessor that
// queued its records before.
func TestBestEffortRecordAfterShutdownIsCounted(t *testing.T) {
	t.Run("session's pipeline", func(t *testing.T) {
		h := catchOTelErrors(t)
		rec := newRecorder(t)
		s := rec.session(t, sandboxtrace.WithLogExporter(&logSink{}))
		require.NoError(t, s.Shutdown(context.Background()))
		require.NoError(t, s.Read(context.Background(), "/x", nil, nothing))
		require.Len(t, h.all(), 1)
		assert.Contains(t, h.all()[0].Error(), "1 log record lost")
	})
	t.Run("caller's provider", func(t *testing.T) {
		h := catchOTelErrors(t)
		proc := sandboxtrace.NewLogProcessor(&logSink{})
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(proc))
		rec := newRecorder(t)
		s := rec.session(t, sandboxtrace.WithLoggerProvider(lp))
		require.NoError(t, s.Read(context.Background(), "/a", nil, nothing))
		require.NoError(t, lp.Shutdown(context.Background()))
		require.NoError(t, s.Read(context.Background(), "/b", nil, nothing))
		assert.Equal(t, uint64(1), proc.Lost())
		assert.NotEmpty(t, h.all())
	})
}

// A best-effort session on a provider built for sync delivery (one shared
// SyncLogProcessor) runs its operations even when the start record's
// export fails, and reports the loss: a lost record is never silent.
func TestBestEffortOnASyncProviderReportsALostRecord(t *testing.T) {
	h := catchOTelErrors(t)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(
		sandboxtrace.NewSyncLogProcessor(&logSink{fail: errors.New("collector said no")}, 0)))
	t.Cleanup(func() { require.NoError(t, lp.Shutdown(context.Background())) })
	rec := newRecorder(t)
	s := rec.session(t, sandboxtrace.WithLoggerProvider(lp))
	ran := false
	require.NoError(t, s.Read(context.Background(), "/a", nil, func(context.Context) error { ran = true; return nil }))
	assert.True(t, ran)
	var texts []string
	for _, e := range h.all() {
		texts = append(texts, e.Error())
	}
	require.Len(t, texts, 1, "the lost start record is reported once")
	assert.Contains(t, texts[0], "collector said no")
	assert.Contains(t, texts[0], "lost")
}

// An operation span the provider does not sample is never exported, so its
// finish event is lost: the session reports it (once), as it reports every
// other loss, instead of losing audit events in silence.
func TestUnsampledOperationsAreReported(t *testing.T) {
	for name, sampler := range map[string]sdktrace.Sampler{
		"never":              sdktrace.NeverSample(),
		"parent not sampled": sdktrace.ParentBased(sdktrace.AlwaysSample()),
	} {
		t.Run(name, func(t *testing.T) {
			h := catchOTelErrors(t)
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sampler))
			t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.Background())) })
			ctx := context.Background()
			if name == "parent not sampled" {
				ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
					TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, Remote: true}))
			}
			s, err := sandboxtrace.NewSession(ctx, tp)
			require.NoError(t, err)
			for range 3 {
				require.NoError(t, s.Read(ctx, "/a", nil, nothing))
			}
			assert.Empty(t, exp.GetSpans())
			errs := h.all()
			require.Len(t, errs, 1, "reported once per session")
			assert.Contains(t, errs[0].Error(), "not sampled")
		})
	}
	t.Run("finish records sent ahead", func(t *testing.T) {
		h := catchOTelErrors(t)
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
		t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.Background())) })
		sink := &logSink{}
		s, err := sandboxtrace.NewSession(context.Background(), tp, sandboxtrace.WithLogExporter(sink),
			sandboxtrace.WithDelivery(sandboxtrace.DeliverySyncFinish))
		require.NoError(t, err)
		require.NoError(t, s.Read(context.Background(), "/a", nil, nothing))
		require.NoError(t, s.Shutdown(context.Background()))
		assert.Len(t, sink.records(), 2, "start and finish")
		assert.Empty(t, h.all(), "nothing is lost")
	})
}

// Spans ended after their TracerProvider shut down are dropped by the SDK:
// the finish events they carry are lost, and the start line alone reads
// like a process killed mid-operation. The session reports it (once); with
// DeliverySyncFinish the finish goes ahead and nothing is lost.
func TestOperationsAfterTheTracerProviderShutDownAreReported(t *testing.T) {
	for _, d := range []sandboxtrace.Delivery{sandboxtrace.DeliveryBestEffort, sandboxtrace.DeliverySyncFinish} {
		t.Run(d.String(), func(t *testing.T) {
			h := catchOTelErrors(t)
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
			sink := &logSink{}
			s, err := sandboxtrace.NewSession(context.Background(), tp, sandboxtrace.WithLogExporter(sink), sandboxtrace.WithDelivery(d))
			require.NoError(t, err)
			require.NoError(t, tp.Shutdown(context.Background()))
			for range 2 {
				require.NoError(t, s.Read(context.Background(), "/a", nil, nothing))
			}
			require.NoError(t, s.Shutdown(context.Background()))
			errs := h.all()
			if d == sandboxtrace.DeliverySyncFinish {
				assert.Empty(t, errs)
				assert.Len(t, sink.records(), 4, "both events of both operations went ahead")
				return
			}
			require.Len(t, errs, 1, "reported once per session")
			assert.Contains(t, errs[0].Error(), "TracerProvider is shut down")
		})
	}
}

// A session started on a TracerProvider that records no spans (shut down
// already, a no-op provider, the global one before it is set) sends its
// start records ahead, but its spans, and so its finish events, are dropped:
// every operation would read as open. The session reports it once. A no-op
// provider without a log pipeline records nothing on purpose: no report.
// That holds for the deprecated trace.NewNoopTracerProvider too, and under
// a caller's trace, where a no-op provider's spans carry the caller's span
// context as a shut-down provider's never do.
func TestSessionsOnAProviderThatRecordsNoSpansAreReported(t *testing.T) {
	shut := sdktrace.NewTracerProvider()
	require.NoError(t, shut.Shutdown(context.Background()))
	caller := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true}))
	unsampled := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, Remote: true}))
	//lint:ignore SA1019 the deprecated provider is what these cases are about
	deprecated := trace.NewNoopTracerProvider() //nolint:staticcheck // the same reason, for golangci-lint
	for name, c := range map[string]struct {
		tp     trace.TracerProvider
		ctx    context.Context
		logs   bool
		report string
	}{
		"shut down, with logs":                         {shut, context.Background(), true, "records no spans"},
		"shut down, without logs":                      {shut, context.Background(), false, "records no spans"},
		"no-op, with logs":                             {noop.NewTracerProvider(), context.Background(), true, "records no spans"},
		"no-op, without logs":                          {noop.NewTracerProvider(), context.Background(), false, ""},
		"no-op under a trace, with logs":               {noop.NewTracerProvider(), caller, true, "records no spans"},
		"no-op under a trace, without logs":            {noop.NewTracerProvider(), caller, false, ""},
		"no-op under an unsampled trace, with logs":    {noop.NewTracerProvider(), unsampled, true, "records no spans"},
		"no-op under an unsampled trace, without logs": {noop.NewTracerProvider(), unsampled, false, ""},
		"deprecated no-op, with logs":                  {deprecated, context.Background(), true, "records no spans"},
		"deprecated no-op, without logs":               {deprecated, context.Background(), false, ""},
		"deprecated no-op under a trace, no logs":      {deprecated, caller, false, ""},
	} {
		t.Run(name, func(t *testing.T) {
			h := catchOTelErrors(t)
			var opts []sandboxtrace.Option
			if c.logs {
				opts = append(opts, sandboxtrace.WithLogExporter(&logSink{}))
			}
			s, err := sandboxtrace.NewSession(c.ctx, c.tp, opts...)
			require.NoError(t, err)
			for range 2 {
				require.NoError(t, s.Read(c.ctx, "/a", nil, nothing))
			}
			require.NoError(t, s.Shutdown(context.Background()))
			if c.report == "" {
				assert.Empty(t, h.all())
				return
			}
			require.Len(t, h.all(), 1, "reported once per session")
			assert.Contains(t, h.all()[0].Error(), "finish events")
			assert.Contains(t, h.all()[0].Error(), c.report)
		})
	}
}

// A span attribute count limit (OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT) makes the
// SDK drop the finish attributes set last without a word: the collector
// then writes the start data as the finish data, or null error fields for a
// failure. The session reports it once.
func TestDroppedSpanAttributesAreReported(t *testing.T) {
	for name, limit := range map[string]int{"limited": 12, "default": 0} {
		t.Run(name, func(t *testing.T) {
			h := catchOTelErrors(t)
			exp := tracetest.NewInMemoryExporter()
			limits := sdktrace.NewSpanLimits()
			if limit > 0 {
				limits.AttributeCountLimit = limit
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithRawSpanLimits(limits))
			s, err := sandboxtrace.NewSession(context.Background(), tp)
			require.NoError(t, err)
			for range 2 {
				_, err = s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"false"}},
					runs(sandboxtrace.ExecResult{ExitCode: 1}, nil))
				require.NoError(t, err)
			}
			if limit == 0 {
				assert.Empty(t, h.all())
				return
			}
			require.Len(t, h.all(), 1, "reported once per session")
			assert.Contains(t, h.all()[0].Error(), "attribute count limit")
		})
	}
}

// An attribute value length limit (OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT)
// cuts long values without a word: a cut error message is written cut, a
// cut data JSON makes the span unreadable. The session reports it once.
func TestCutSpanAttributesAreReported(t *testing.T) {
	for name, limit := range map[string]int{"limited": 40, "default": 0} {
		t.Run(name, func(t *testing.T) {
			h := catchOTelErrors(t)
			limits := sdktrace.NewSpanLimits()
			if limit > 0 {
				limits.AttributeValueLengthLimit = limit
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()), sdktrace.WithRawSpanLimits(limits))
			s, err := sandboxtrace.NewSession(context.Background(), tp)
			require.NoError(t, err)
			for range 2 {
				err = s.Read(context.Background(), "/a", nil, func(context.Context) error {
					return errors.New(strings.Repeat("permission denied ", 5))
				})
				require.Error(t, err)
			}
			if limit == 0 {
				assert.Empty(t, h.all())
				return
			}
			require.Len(t, h.all(), 1, "reported once per session")
			assert.Contains(t, h.all()[0].Error(), "value length limit")
		})
	}
}

// A session checks a span's attributes only for a value longer than any it
// found intact; a cut value after operations whose values all fit is
// still reported.
func TestCutSpanAttributesAreReportedAfterOperationsThatFit(t *testing.T) {
	h := catchOTelErrors(t)
	limits := sdktrace.NewSpanLimits()
	limits.AttributeValueLengthLimit = 40
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()), sdktrace.WithRawSpanLimits(limits))
	s, err := sandboxtrace.NewSession(context.Background(), tp)
	require.NoError(t, err)
	for range 2 {
		require.NoError(t, s.Read(context.Background(), "/a", nil, nothing))
	}
	assert.Empty(t, h.all(), "every value fits")
	err = s.Read(context.Background(), "/a", nil, func(context.Context) error {
		return errors.New(strings.Repeat("permission denied ", 5))
	})
	require.Error(t, err)
	require.Len(t, h.all(), 1)
	assert.Contains(t, h.all()[0].Error(), "value length limit")
}
