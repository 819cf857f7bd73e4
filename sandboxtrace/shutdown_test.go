package sandboxtrace_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// emitUntilBlocked runs emits one after another on a goroutine, at most
// max, until one is blocked in a select in OnEmit (waiting on a full
// queue) while the exporter is stuck in stuck (its Export method's name),
// so the queue stays full; that emit is the last. The emits before it have
// returned, so the blocked emitter is the last one, not an earlier one on
// its way. (An emitter blocked only because the worker had not yet taken
// the first record used to end the emits early.) The result waits for the
// last emit to return and says how many were made.
func emitUntilBlocked(t *testing.T, max int, stuck string, emit func()) (wait func() int) {
	t.Helper()
	var started atomic.Int64
	var stop atomic.Bool
	wg := &sync.WaitGroup{}
	wg.Go(func() {
		for range max {
			if stop.Load() {
				return
			}
			started.Add(1)
			emit()
		}
	})
	buf := make([]byte, 1<<20)
	waitBlocked(t, onEmit, func() bool { return blockedIn(buf, stuck) })
	stop.Store(true)
	return func() int {
		wg.Wait()
		return int(started.Load())
	}
}

// waitBlocked waits (bounded) until ready holds and a goroutine with fn on
// its stack is blocked.
func waitBlocked(t *testing.T, fn string, ready func() bool) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for range 1000 {
		if ready() && blockedIn(buf, fn) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never blocked", fn)
}

// blockedIn reports whether a goroutine with fn on its stack is blocked
// (in a select, on a channel or on a lock).
func blockedIn(buf []byte, fn string) bool {
	n := runtime.Stack(buf, true)
	for g := range strings.SplitSeq(string(buf[:n]), "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		blocked := strings.Contains(head, "[select") || strings.Contains(head, "[chan ") ||
			strings.Contains(head, "[sync.") || strings.Contains(head, "[semacquire")
		if blocked && strings.Contains(g, fn) {
			return true
		}
	}
	return false
}

const (
	onEmit        = "sandboxtrace.(*LogProcessor).OnEmit"
	stubbornStuck = "(*stubbornLogs).Export"
	sinkStuck     = "(*logSink).Export"
)

// Shutdown honours its context while an emitter waits on a full queue
// behind a stuck export: the waiting record is lost (counted), not waited
// for, and the exporter is shut down all the same.
func TestLogProcessorShutdownDoesNotWaitForABlockedEmitter(t *testing.T) {
	catchOTelErrors(t)
	exp := &stubbornLogs{release: make(chan struct{})}
	defer close(exp.release)
	p := sandboxtrace.NewLogProcessor(exp, sandboxtrace.WithLogQueueSize(1), sandboxtrace.WithLogBatchSize(1))
	wait := emitUntilBlocked(t, 3, stubbornStuck, func() { // one exporting, one queued, one waiting
		var r sdklog.Record
		_ = p.OnEmit(context.Background(), &r)
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := p.Shutdown(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	wait()
	assert.False(t, exp.returned.Load(), "Shutdown waited for the stuck export")
	assert.Equal(t, uint64(1), p.Lost(), "the waiting record")
	assert.Equal(t, int32(1), exp.shut.Load())
}

// shutDownThenOpen starts shutdown, waits until the function named fn in
// it is blocked (behind the waiting emitter, or past it if shutdown let it
// go), lets exp's held exports through and returns shutdown's error.
func shutDownThenOpen(t *testing.T, exp *logSink, fn string, shutdown func(context.Context) error) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- shutdown(context.Background()) }()
	waitBlocked(t, fn, func() bool { return true })
	close(exp.hold)
	return <-errc
}

// A Shutdown whose context does not end waits for the operations queued
// behind a full queue: a slow exporter loses nothing.
func TestGracefulShutdownSendsTheWaitingRecords(t *testing.T) {
	h := catchOTelErrors(t)
	exp := &logSink{hold: make(chan struct{})}
	rec := newRecorder(t)
	s := rec.session(t, sandboxtrace.WithLogExporter(exp))
	const ops = sandboxtrace.DefaultLogBatchSize + sandboxtrace.DefaultLogQueueSize + 1
	wait := emitUntilBlocked(t, ops, sinkStuck, func() {
		_ = s.Read(context.Background(), "/x", nil, nothing)
	})
	require.NoError(t, shutDownThenOpen(t, exp, "sdk/log.(*LoggerProvider).Shutdown", s.Shutdown))
	assert.Len(t, exp.records(), wait())
	assert.Empty(t, h.all())
}

// So does the processor's own Shutdown, which owners of their provider
// call first (README): it waits for the emitter as the worker makes room.
func TestGracefulLogProcessorShutdownSendsTheWaitingRecord(t *testing.T) {
	h := catchOTelErrors(t)
	exp := &logSink{hold: make(chan struct{})}
	p := sandboxtrace.NewLogProcessor(exp, sandboxtrace.WithLogQueueSize(1), sandboxtrace.WithLogBatchSize(1))
	wait := emitUntilBlocked(t, 3, sinkStuck, func() { // one exporting, one queued, one waiting
		var r sdklog.Record
		_ = p.OnEmit(context.Background(), &r)
	})
	require.NoError(t, shutDownThenOpen(t, exp, "sandboxtrace.(*LogProcessor).Shutdown", p.Shutdown))
	assert.Len(t, exp.records(), wait())
	assert.Zero(t, p.Lost())
	assert.Empty(t, h.all())
}

// Session.Shutdown lets an operation waiting on the session's full queue
// behind a stuck export go once its context ends (the SDK provider waits
// for emits in progress, then gives up without shutting its processors
// down), and shuts the exporter down itself.
func TestSessionShutdownReleasesAWaitingOperation(t *testing.T) {
	catchOTelErrors(t)
	exp := &stubbornLogs{release: make(chan struct{})}
	defer close(exp.release)
	rec := newRecorder(t)
	s := rec.session(t, sandboxtrace.WithLogExporter(exp))
	// One export stuck, a full queue, then one more that waits.
	const ops = sandboxtrace.DefaultLogBatchSize + sandboxtrace.DefaultLogQueueSize + 1
	wait := emitUntilBlocked(t, ops, stubbornStuck, func() {
		_ = s.Read(context.Background(), "/x", nil, nothing)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, s.Shutdown(ctx), context.DeadlineExceeded)
	wait()
	assert.False(t, exp.returned.Load(), "the waiting operation was held until the stuck export returned")
	assert.Equal(t, int32(1), exp.shut.Load())
}

// A Session.Shutdown with a context already spent (a request's, in a
// defer) still shuts the session's pipeline down, once: the SDK provider
// alone would return the context's error and leave the worker running and
// the exporter open.
func TestSessionShutdownWithSpentContextShutsThePipelineDown(t *testing.T) {
	for name, delivery := range map[string]sandboxtrace.Delivery{"best effort": sandboxtrace.DeliveryBestEffort, "sync": sandboxtrace.DeliverySync} {
		t.Run(name, func(t *testing.T) {
			exp := &logSink{}
			rec := newRecorder(t)
			s := rec.session(t, sandboxtrace.WithLogExporter(exp), sandboxtrace.WithDelivery(delivery))
			require.NoError(t, s.Read(context.Background(), "/x", nil, nothing))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			require.ErrorIs(t, s.Shutdown(ctx), context.Canceled)
			assert.Equal(t, int32(1), exp.shut.Load())
			require.NoError(t, s.Shutdown(context.Background()))
			assert.Equal(t, int32(1), exp.shut.Load(), "shut down once")
		})
	}
}

// panickyLogs panics in Export.
type panickyLogs struct{ logSink }

func (*panickyLogs) Export(context.Context, []sdklog.Record) error { panic("exporter bug") }

// A sync export runs on its own goroutine (so the timeout can bound it); a
// panic there fails the operation instead of the process.
func TestSyncExporterPanicFailsTheOperation(t *testing.T) {
	rec := newRecorder(t)
	s := rec.session(t, sandboxtrace.WithLogExporter(&panickyLogs{}), sandboxtrace.WithDelivery(sandboxtrace.DeliverySync))
	called := false
	err := s.Read(context.Background(), "/x", nil, func(context.Context) error { called = true; return nil })
	require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
	assert.ErrorContains(t, err, "log exporter panicked: exporter bug")
	assert.False(t, called)
}

// A panicking exporter behind the best-effort LogProcessor loses its batch,
// counted and reported, instead of ending the process from the worker.
func TestBestEffortExporterPanicIsALoss(t *testing.T) {
	h := catchOTelErrors(t)
	p := sandboxtrace.NewLogProcessor(&panickyLogs{})
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
	rec := newRecorder(t)
	s := rec.session(t, sandboxtrace.WithLoggerProvider(lp))
	require.NoError(t, s.Read(context.Background(), "/x", nil, nothing))
	err := p.ForceFlush(context.Background())
	_ = lp.Shutdown(context.Background())
	var texts []string
	for _, e := range append(h.all(), err) {
		if e != nil {
			texts = append(texts, e.Error())
		}
	}
	require.NotEmpty(t, texts)
	assert.Contains(t, strings.Join(texts, "\n"), "log exporter panicked: exporter bug")
	assert.Equal(t, uint64(1), p.Lost())
}

// An operation started and never finished (a Start whose Finish a caller
// forgot, on a path that returns early) has a span that never ends: its
// finish is never recorded, and without a log pipeline its start neither.
// Shutdown says how many are open; with none open it says nothing.
func TestSessionShutdownReportsOperationsNotFinished(t *testing.T) {
	for name, logs := range map[string]bool{"with logs": true, "without logs": false} {
		t.Run(name, func(t *testing.T) {
			h := catchOTelErrors(t)
			var opts []sandboxtrace.Option
			if logs {
				opts = append(opts, sandboxtrace.WithLogExporter(&logSink{}))
			}
			rec := newRecorder(t)
			s := rec.session(t, opts...)
			_, done, err := s.Start(context.Background(), "read", nil)
			require.NoError(t, err)
			require.NoError(t, done.Finish(sandboxtrace.FinishOptions{}))
			_, _, err = s.Start(context.Background(), "exec", nil) // never finished
			require.NoError(t, err)
			require.NoError(t, s.Shutdown(context.Background()))
			require.NoError(t, s.Shutdown(context.Background()))
			require.Len(t, h.all(), 1, "reported by the first Shutdown only")
			assert.Contains(t, h.all()[0].Error(), "1 operation not finished")

			h2 := catchOTelErrors(t)
			s2 := rec.session(t, opts...)
			require.NoError(t, s2.Read(context.Background(), "/a", nil, nothing))
			require.NoError(t, s2.Shutdown(context.Background()))
			assert.Empty(t, h2.all())
		})
	}
}
