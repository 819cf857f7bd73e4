package sandboxtrace

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// gateLogs is a log exporter whose first export waits for open to close;
// it keeps each export's bodies.
type gateLogs struct {
	entered chan struct{} // closed when the first export starts
	open    chan struct{}
	once    sync.Once

	mu      sync.Mutex
	exports [][]string
}

func newGateLogs() *gateLogs {
	return &gateLogs{entered: make(chan struct{}), open: make(chan struct{})}
}

func (g *gateLogs) Export(ctx context.Context, recs []sdklog.Record) error {
	g.once.Do(func() { close(g.entered) })
	select {
	case <-g.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	bodies := make([]string, len(recs))
	for i := range recs {
		bodies[i] = recs[i].Body().AsString()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.exports = append(g.exports, bodies)
	return nil
}

func (g *gateLogs) Shutdown(context.Context) error   { return nil }
func (g *gateLogs) ForceFlush(context.Context) error { return nil }

func (g *gateLogs) sent() [][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]string(nil), g.exports...)
}

// waitQueued waits, a bounded number of times, until n records wait in p.
func waitQueued(t *testing.T, p *SyncLogProcessor, n int) {
	t.Helper()
	for range 2000 {
		p.mu.Lock()
		got := len(p.waiting)
		p.mu.Unlock()
		if got == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%d records never waited together", n)
}

func emitBody(ctx context.Context, p *SyncLogProcessor, body string, timeout time.Duration) error {
	var r sdklog.Record
	r.SetBody(attribute.StringValue(body))
	a := &ack{timeout: timeout}
	_ = p.OnEmit(withAck(ctx, a), &r) // with an ack the result goes there
	return a.result(ErrStartNotRecorded)
}

// Records emitted while an export is in flight go together in the next
// one, and each emitter gets its acknowledgement.
func TestSyncLogProcessorGroupsWaitingRecords(t *testing.T) {
	exp := newGateLogs()
	p := NewSyncLogProcessor(exp, 0)
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()
	errs := make(chan error, 4)
	go func() { errs <- emitBody(context.Background(), p, "first", time.Minute) }()
	<-exp.entered
	for _, b := range []string{"a", "b", "c"} {
		go func() { errs <- emitBody(context.Background(), p, b, time.Minute) }()
	}
	waitQueued(t, p, 3)
	close(exp.open)
	for range 4 {
		require.NoError(t, <-errs)
	}
	sent := exp.sent()
	require.Len(t, sent, 2)
	assert.Equal(t, []string{"first"}, sent[0])
	assert.ElementsMatch(t, []string{"a", "b", "c"}, sent[1])
}

// A record whose wait ends before an export takes it is never sent: its
// operation does not run, so no start line may claim it did.
func TestSyncLogProcessorWithdrawsARecordThatTimedOut(t *testing.T) {
	exp := newGateLogs()
	p := NewSyncLogProcessor(exp, 0)
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()
	first := make(chan error, 1)
	go func() { first <- emitBody(context.Background(), p, "first", time.Minute) }()
	<-exp.entered
	err := emitBody(context.Background(), p, "late", 20*time.Millisecond)
	require.ErrorIs(t, err, ErrStartNotRecorded)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(exp.open)
	require.NoError(t, <-first)
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Equal(t, [][]string{{"first"}}, exp.sent())
}

// After Shutdown an emit fails at once.
func TestSyncLogProcessorAfterShutdown(t *testing.T) {
	exp := newGateLogs()
	close(exp.open)
	p := NewSyncLogProcessor(exp, 0)
	require.NoError(t, p.Shutdown(context.Background()))
	err := emitBody(context.Background(), p, "x", time.Second)
	require.ErrorIs(t, err, errProcessorShutdown)
	assert.Empty(t, exp.sent())
}

// Sessions sharing one provider built with NewSyncLogProcessor get their
// acknowledgements from it; a provider without one fails every sync
// operation closed.
func TestSyncDeliveryThroughACallersProvider(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	exp := newGateLogs()
	close(exp.open)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(NewSyncLogProcessor(exp, 0)))
	defer func() { require.NoError(t, lp.Shutdown(context.Background())) }()
	for range 2 {
		s, err := NewSession(context.Background(), tp, WithLoggerProvider(lp), WithDelivery(DeliverySyncFinish))
		require.NoError(t, err)
		require.NoError(t, s.Do(context.Background(), "read", nil, func(context.Context, *Op) error { return nil }))
		require.NoError(t, s.Shutdown(context.Background()))
	}
	assert.Len(t, exp.sent(), 4, "a start and a finish per session")

	open := newGateLogs()
	close(open.open)
	plain := sdklog.NewLoggerProvider(sdklog.WithProcessor(NewLogProcessor(open)))
	defer func() { _ = plain.Shutdown(context.Background()) }()
	s, err := NewSession(context.Background(), tp, WithLoggerProvider(plain), WithDelivery(DeliverySync))
	require.NoError(t, err)
	called := false
	err = s.Do(context.Background(), "read", nil, func(context.Context, *Op) error { called = true; return nil })
	require.ErrorIs(t, err, ErrStartNotRecorded)
	assert.True(t, errors.Is(err, errNoSyncProcessor), "%v", err)
	assert.False(t, called)
}

// Waiting records go together only up to ExportBytes, so that
// sessions sharing a processor never build a request the collector
// refuses for its size where each record alone would pass; a record over
// the bound goes alone.
func TestSyncLogProcessorBoundsABatchsBytes(t *testing.T) {
	exp := newGateLogs()
	p := NewSyncLogProcessor(exp, 0)
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()
	errs := make(chan error, 5)
	go func() { errs <- emitBody(context.Background(), p, "first", time.Minute) }()
	<-exp.entered
	big := strings.Repeat("x", ExportBytes/3)
	huge := strings.Repeat("y", ExportBytes+1)
	for _, b := range []string{big, big, big, huge} {
		go func() { errs <- emitBody(context.Background(), p, b, time.Minute) }()
	}
	waitQueued(t, p, 4)
	close(exp.open)
	for range 5 {
		require.NoError(t, <-errs)
	}
	sent := exp.sent()
	require.Greater(t, len(sent), 2, "the waiting records took more than one export")
	total := 0
	for _, batch := range sent[1:] {
		n := 0
		for _, b := range batch {
			n += len(b)
		}
		total += len(batch)
		if len(batch) > 1 {
			assert.LessOrEqual(t, n, ExportBytes, "an export of %d records", len(batch))
		}
	}
	assert.Equal(t, 4, total)
}

// A live provider built with the SDK's own processors only (no processor
// of ours saw the record) fails a sync operation closed for want of a
// SyncLogProcessor, not as if it were shut down.
func TestSyncDeliveryOnAProviderWithoutOurProcessors(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	exp := newGateLogs()
	close(exp.open)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	s, err := NewSession(context.Background(), tp, WithLoggerProvider(lp), WithDelivery(DeliverySync))
	require.NoError(t, err)
	err = s.Do(context.Background(), "read", nil, func(context.Context, *Op) error { return nil })
	require.ErrorIs(t, err, ErrStartNotRecorded)
	assert.ErrorIs(t, err, errNoSyncProcessor)
	assert.NotContains(t, err.Error(), "shut down")

	require.NoError(t, lp.Shutdown(context.Background()))
	err = s.Do(context.Background(), "read", nil, func(context.Context, *Op) error { return nil })
	require.ErrorIs(t, err, ErrStartNotRecorded)
	assert.ErrorContains(t, err, "shut down")
}

// refusingLogs is a log exporter whose every export fails.
type refusingLogs struct{}

func (refusingLogs) Export(context.Context, []sdklog.Record) error { return errors.New("refused") }
func (refusingLogs) Shutdown(context.Context) error                { return nil }
func (refusingLogs) ForceFlush(context.Context) error              { return nil }

// A provider with two SyncLogProcessors (two collectors, say) acknowledges
// a record only when both exported it: one's success does not hide the
// other's failure, whichever comes first.
func TestSyncDeliveryThroughTwoProcessorsNeedsBoth(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	for _, refusedFirst := range []bool{true, false} {
		accepted := newGateLogs()
		close(accepted.open)
		procs := []sdklog.Processor{NewSyncLogProcessor(refusingLogs{}, 0), NewSyncLogProcessor(accepted, 0)}
		if !refusedFirst {
			procs[0], procs[1] = procs[1], procs[0]
		}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(procs[0]), sdklog.WithProcessor(procs[1]))
		s, err := NewSession(context.Background(), tp, WithLoggerProvider(lp), WithDelivery(DeliverySync))
		require.NoError(t, err)
		called := false
		err = s.Do(context.Background(), "read", nil, func(context.Context, *Op) error { called = true; return nil })
		require.ErrorIs(t, err, ErrStartNotRecorded, "refused first: %v", refusedFirst)
		assert.False(t, called)
		require.NoError(t, s.Shutdown(context.Background()))
		require.NoError(t, lp.Shutdown(context.Background()))
	}
}
