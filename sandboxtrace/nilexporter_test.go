package sandboxtrace_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// An exporter variable left nil (its constructor's error ignored) reaches
// the processors: the SDK's own batch processor drops spans for it, ours
// crashed the process on its export goroutine. Each export now fails and
// is reported as a loss; a sync operation fails closed.
func TestProcessorsWithANilExporterReportLosses(t *testing.T) {
	var spanExp *tracetest.InMemoryExporter
	var logExp *sandboxtrace.DirectLogExporter
	t.Run("NewSpanProcessor", func(t *testing.T) {
		h := catchOTelErrors(t)
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sandboxtrace.NewSpanProcessor(spanExp)))
		s, err := sandboxtrace.NewSession(context.Background(), tp)
		require.NoError(t, err)
		require.NoError(t, s.Read(context.Background(), "/a", nil, nothing))
		require.NoError(t, s.Shutdown(context.Background()))
		require.NoError(t, tp.Shutdown(context.Background()))
		require.NotEmpty(t, h.all())
		assert.Contains(t, h.all()[0].Error(), "nil exporter")
	})
	t.Run("NewLogProcessor", func(t *testing.T) {
		h := catchOTelErrors(t)
		p := sandboxtrace.NewLogProcessor(logExp)
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
		s := newRecorder(t).session(t, sandboxtrace.WithLoggerProvider(lp))
		require.NoError(t, s.Read(context.Background(), "/a", nil, nothing))
		require.NoError(t, p.Shutdown(context.Background()))
		require.NoError(t, lp.Shutdown(context.Background()))
		assert.EqualValues(t, 1, p.Lost())
		require.NotEmpty(t, h.all())
		assert.Contains(t, h.all()[0].Error(), "nil exporter")
	})
	t.Run("NewSyncLogProcessor", func(t *testing.T) {
		p := sandboxtrace.NewSyncLogProcessor(logExp, 0)
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
		s := newRecorder(t).session(t, sandboxtrace.WithLoggerProvider(lp), sandboxtrace.WithDelivery(sandboxtrace.DeliverySync))
		err := s.Read(context.Background(), "/a", nil, nothing)
		require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
		assert.Contains(t, err.Error(), "nil exporter")
		require.NoError(t, lp.Shutdown(context.Background()))
	})
}

// fanOut sends each export to all of its exporters; none is a valid set.
type fanOut []sdklog.Exporter

func (f fanOut) Export(ctx context.Context, rs []sdklog.Record) error {
	for _, e := range f {
		if err := e.Export(ctx, rs); err != nil {
			return err
		}
	}
	return nil
}

func (fanOut) Shutdown(context.Context) error   { return nil }
func (fanOut) ForceFlush(context.Context) error { return nil }

// A nil slice exporter is a usable value (ranging over it does nothing),
// unlike a nil pointer: it is not taken for a missing exporter.
func TestANilSliceExporterIsNotMissing(t *testing.T) {
	h := catchOTelErrors(t)
	p := sandboxtrace.NewLogProcessor(fanOut(nil))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
	s := newRecorder(t).session(t, sandboxtrace.WithLoggerProvider(lp))
	require.NoError(t, s.Read(context.Background(), "/a", nil, nothing))
	require.NoError(t, p.Shutdown(context.Background()))
	require.NoError(t, lp.Shutdown(context.Background()))
	assert.Zero(t, p.Lost())
	assert.Empty(t, h.all())
}
