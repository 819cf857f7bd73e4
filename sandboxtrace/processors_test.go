package sandboxtrace_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// handled collects what reaches the global OTel error handler for the
// test's duration.
type handled struct {
	mu   sync.Mutex
	errs []error
}

func (h *handled) Handle(err error) {
	h.mu.Lock()
	h.errs = append(h.errs, err)
	h.mu.Unlock()
}

func (h *handled) all() []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]error(nil), h.errs...)
}

func catchOTelErrors(t *testing.T) *handled {
	h := &handled{}
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(h)
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
	return h
}

func emitN(lp *sdklog.LoggerProvider, n int) {
	l := lp.Logger("test")
	for i := range n {
		var r log.Record
		r.SetBody(attribute.IntValue(i))
		l.Emit(context.Background(), r)
	}
}

func TestLogProcessorBlocksInsteadOfDropping(t *testing.T) {
	sink := &logSink{hold: make(chan struct{})}
	p := sandboxtrace.NewLogProcessor(sink, sandboxtrace.WithLogQueueSize(2), sandboxtrace.WithLogBatchSize(2),
		sandboxtrace.WithLogExportInterval(time.Hour))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
	done := make(chan struct{})
	go func() {
		defer close(done)
		emitN(lp, 20) // ten times the queue
	}()
	select {
	case <-done:
		t.Fatal("20 records fit a queue of 2 while the exporter is stuck: something was dropped")
	case <-time.After(50 * time.Millisecond):
	}
	close(sink.hold)
	<-done
	require.NoError(t, lp.Shutdown(context.Background()))
	require.Len(t, sink.records(), 20)
	for i, r := range sink.records() {
		assert.Equal(t, int64(i), r.Body().AsInt64(), "order kept")
	}
	assert.Zero(t, p.Lost())
}

func TestLogProcessorCountsAndReportsLosses(t *testing.T) {
	h := catchOTelErrors(t)
	sink := &logSink{fail: errors.New("collector said no")}
	p := sandboxtrace.NewLogProcessor(sink, sandboxtrace.WithLogBatchSize(3), sandboxtrace.WithLogExportInterval(time.Hour))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
	emitN(lp, 3) // a full batch: exported (and lost) by the worker
	emitN(lp, 2)
	err := p.ForceFlush(context.Background())
	require.ErrorContains(t, err, "2 log records lost (5 in total)")
	require.ErrorContains(t, err, "collector said no")
	require.NoError(t, p.Shutdown(context.Background()))
	var r sdklog.Record
	require.ErrorContains(t, p.OnEmit(context.Background(), &r), "1 log record lost (6 in total)")
	assert.Equal(t, uint64(6), p.Lost())

	var texts []string
	for _, e := range h.all() {
		texts = append(texts, e.Error())
	}
	assert.Contains(t, texts, "sandboxtrace: 3 log records lost (3 in total): collector said no")
	assert.Contains(t, texts, "sandboxtrace: 2 log records lost (5 in total): collector said no")
}

// failingSpans is a span exporter that always fails.
type failingSpans struct{ *tracetest.InMemoryExporter }

func (failingSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error {
	return errors.New("backend down")
}

func TestSpanProcessorReportsLostSpans(t *testing.T) {
	h := catchOTelErrors(t)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(
		sandboxtrace.NewSpanProcessor(failingSpans{tracetest.NewInMemoryExporter()},
			sdktrace.WithBatchTimeout(time.Millisecond))))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tr := tp.Tracer("t")
	_, sp := tr.Start(context.Background(), "x")
	sp.End()
	// The periodic export runs in the background: its loss can only reach
	// the error handler. Bounded wait.
	var texts []string
	for i := 0; i < 500 && len(texts) == 0; i++ {
		time.Sleep(10 * time.Millisecond)
		for _, e := range h.all() {
			texts = append(texts, e.Error())
		}
	}
	assert.Equal(t, []string{"sandboxtrace: 1 span lost (1 in total): backend down"}, texts)
}

func TestSpanProcessorBlocksInsteadOfDropping(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(
		sandboxtrace.NewSpanProcessor(exp, sdktrace.WithMaxQueueSize(1), sdktrace.WithMaxExportBatchSize(1))))
	tr := tp.Tracer("t")
	for range 500 {
		_, sp := tr.Start(context.Background(), "x")
		sp.End()
	}
	require.NoError(t, tp.ForceFlush(context.Background()))
	assert.Len(t, exp.GetSpans(), 500, "a queue of 1 without blocking drops most of these")
}

// By default a record is exported as soon as it is queued, not at the next
// tick: a start event then leaves the process while its operation runs,
// and a kill -9 during the operation no longer loses it. In a synctest
// bubble time stands still while the worker is idle, so a record that
// waits for a tick is still unexported when every goroutine has settled.
func TestLogProcessorExportsAtOnceByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &logSink{}
		p := sandboxtrace.NewLogProcessor(sink)
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
		emitN(lp, 1)
		synctest.Wait()
		require.Len(t, sink.records(), 1, "exported without a flush or a tick")
		emitN(lp, 2)
		synctest.Wait()
		require.Len(t, sink.records(), 3)
		require.NoError(t, lp.Shutdown(context.Background()))
	})
}

// With an interval, records wait for a full batch or the tick.
func TestLogProcessorWithIntervalBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &logSink{}
		p := sandboxtrace.NewLogProcessor(sink, sandboxtrace.WithLogExportInterval(time.Second))
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
		emitN(lp, 2)
		synctest.Wait()
		require.Empty(t, sink.records(), "waiting for the tick")
		time.Sleep(time.Second)
		synctest.Wait()
		require.Len(t, sink.records(), 2)
		require.NoError(t, lp.Shutdown(context.Background()))
	})
}

// batchesOf is a span exporter keeping each export's spans.
type batchesOf struct {
	mu      sync.Mutex
	batches [][]sdktrace.ReadOnlySpan
}

func (b *batchesOf) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batches = append(b.batches, append([]sdktrace.ReadOnlySpan(nil), spans...))
	return nil
}

func (b *batchesOf) Shutdown(context.Context) error { return nil }

// attrBytes is the length of a span's string attribute values.
func attrBytes(s sdktrace.ReadOnlySpan) int {
	n := 0
	for _, kv := range s.Attributes() {
		n += len(kv.Value.String())
	}
	return n
}

// Exec spans carrying captured output are sent in exports of at most
// ExportBytes: a batch of hundreds of them in one request
// would pass the collector's 20 MiB limit and be refused whole.
func TestSpanProcessorBoundsAnExportsBytes(t *testing.T) {
	exp := &batchesOf{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(
		sandboxtrace.NewSpanProcessor(exp, sdktrace.WithBatchTimeout(time.Hour))))
	s, err := sandboxtrace.NewSession(context.Background(), tp, sandboxtrace.WithOutputCapture(0))
	require.NoError(t, err)
	out := make([]byte, sandboxtrace.DefaultMaxOutputBytes)
	const ops = 100
	for range ops {
		_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"cat"}},
			runs(sandboxtrace.ExecResult{Stdout: out, Stderr: out}, nil))
		require.NoError(t, err)
	}
	s.End()
	require.NoError(t, tp.ForceFlush(context.Background()))
	require.NoError(t, tp.Shutdown(context.Background()))
	require.Greater(t, len(exp.batches), 1)
	total := 0
	for _, batch := range exp.batches {
		n := 0
		for _, sp := range batch {
			n += attrBytes(sp)
		}
		total += len(batch)
		if len(batch) > 1 {
			assert.LessOrEqual(t, n, sandboxtrace.ExportBytes, "an export of %d spans", len(batch))
		}
	}
	assert.Equal(t, ops+1, total, "every span sent once (the session's root too)")
}

// logBatches is a log exporter keeping each export's body bytes.
type logBatches struct {
	mu    sync.Mutex
	sizes [][]int
}

func (l *logBatches) Export(_ context.Context, recs []sdklog.Record) error {
	sizes := make([]int, len(recs))
	for i := range recs {
		sizes[i] = len(recs[i].Body().AsString())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sizes = append(l.sizes, sizes)
	return nil
}

func (l *logBatches) Shutdown(context.Context) error   { return nil }
func (l *logBatches) ForceFlush(context.Context) error { return nil }

// Queued records go together only up to ExportBytes, as in the
// SyncLogProcessor: large data must not make a request the collector
// refuses for its size.
func TestLogProcessorBoundsAnExportsBytes(t *testing.T) {
	sink := &logBatches{}
	p := sandboxtrace.NewLogProcessor(sink, sandboxtrace.WithLogExportInterval(time.Hour))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
	big := strings.Repeat("x", sandboxtrace.ExportBytes/3)
	l := lp.Logger("test")
	for range 9 {
		var r log.Record
		r.SetBody(attribute.StringValue(big))
		l.Emit(context.Background(), r)
	}
	require.NoError(t, lp.Shutdown(context.Background()))
	require.Greater(t, len(sink.sizes), 1)
	total := 0
	for _, batch := range sink.sizes {
		n := 0
		for _, s := range batch {
			n += s
		}
		total += len(batch)
		if len(batch) > 1 {
			assert.LessOrEqual(t, n, sandboxtrace.ExportBytes)
		}
	}
	assert.Equal(t, 9, total)
}
