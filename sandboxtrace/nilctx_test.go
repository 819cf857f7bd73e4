package sandboxtrace_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// A nil ctx, which the OTel SDK takes as context.Background, records the
// operation instead of panicking in the caller's process.
func TestNilContextIsBackground(t *testing.T) {
	var nilCtx context.Context // the careless caller under test
	for _, d := range []sandboxtrace.Delivery{sandboxtrace.DeliveryBestEffort, sandboxtrace.DeliverySyncFinish} {
		t.Run(d.String(), func(t *testing.T) {
			rec := newRecorder(t)
			sink := &logSink{}
			s, err := sandboxtrace.NewSession(nilCtx, rec.tp, sandboxtrace.WithLogExporter(sink), sandboxtrace.WithDelivery(d))
			require.NoError(t, err)
			require.NoError(t, s.Read(nilCtx, "/a", nil, nothing))
			ctx, o, err := s.Start(nilCtx, "exec", nil)
			require.NoError(t, err)
			require.NotNil(t, ctx)
			require.NoError(t, o.Finish(sandboxtrace.FinishOptions{}))
			require.NotNil(t, s.Context(nilCtx))
			require.NoError(t, s.Shutdown(nilCtx))
			assert.Len(t, rec.ops(), 2)
			assert.NotEmpty(t, sink.records())
		})
	}
	_, err := sandboxtrace.NewSession(nilCtx, noop.NewTracerProvider())
	require.NoError(t, err)

	lp := sandboxtrace.NewLogProcessor(&logSink{})
	require.NoError(t, lp.ForceFlush(nilCtx))
	require.NoError(t, lp.Shutdown(nilCtx))
	sp := sandboxtrace.NewSyncLogProcessor(&logSink{}, 0)
	require.NoError(t, sp.ForceFlush(nilCtx))
	require.NoError(t, sp.Shutdown(nilCtx))
}

// Start returns a nil *Op when it fails (here: sync delivery with the
// collector away). A caller who defers Finish before checking the error
// gets an error from it, not a panic.
func TestANilOpFromAFailedStartDoesNotPanic(t *testing.T) {
	rec := newRecorder(t)
	sink := &logSink{fail: errors.New("connection refused")}
	s := rec.session(t, sandboxtrace.WithLogExporter(sink), sandboxtrace.WithDelivery(sandboxtrace.DeliverySync))
	_, o, err := s.Start(context.Background(), "exec", nil)
	require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
	require.Nil(t, o)
	o.SetFinishData(map[string]any{"a": 1})
	o.SetOutput([]byte("x"), nil)
	o.SetNotOK()
	o.Span().SetAttributes()
	o.Span().End()
	require.Error(t, o.Finish(sandboxtrace.FinishOptions{}))
	require.NoError(t, s.Shutdown(context.Background()))
	assert.Empty(t, rec.ops())
}

// A provider or exporter variable left nil (set only when a flag is on,
// say) reaches NewSession as a typed nil: it is refused by name, as an
// untyped nil TracerProvider is, instead of panicking at the first
// operation or at Shutdown.
func TestNewSessionRefusesTypedNils(t *testing.T) {
	rec := newRecorder(t)
	var tp *sdktrace.TracerProvider
	var lp *sdklog.LoggerProvider
	var exp *sandboxtrace.DirectLogExporter
	for name, c := range map[string]struct {
		tp   trace.TracerProvider
		opts []sandboxtrace.Option
	}{
		"TracerProvider":     {tp, nil},
		"WithLoggerProvider": {rec.tp, []sandboxtrace.Option{sandboxtrace.WithLoggerProvider(lp)}},
		"WithLogExporter":    {rec.tp, []sandboxtrace.Option{sandboxtrace.WithLogExporter(exp)}},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := sandboxtrace.NewSession(context.Background(), c.tp, c.opts...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), name)
			assert.Nil(t, s)
		})
	}
}
