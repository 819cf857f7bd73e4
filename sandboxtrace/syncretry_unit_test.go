package sandboxtrace

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// awayOnceLogExporter finds the collector away on its first export and
// runs between before returning; later exports succeed. It keeps how many
// records each export carried.
type awayOnceLogExporter struct {
	between func()
	sizes   []int
}

func (e *awayOnceLogExporter) Export(_ context.Context, records []sdklog.Record) error {
	e.sizes = append(e.sizes, len(records))
	if len(e.sizes) == 1 {
		e.between()
		return refusedDial()
	}
	return nil
}

func (e *awayOnceLogExporter) Shutdown(context.Context) error   { return nil }
func (e *awayOnceLogExporter) ForceFlush(context.Context) error { return nil }

// A record whose wait ended while its request got no reply is left out of
// the request that goes again, so that request's success is not its
// acknowledgement: its emitter, told it was not recorded, must never read
// a nil it could take for a late one.
func TestSyncRetryDoesNotAcknowledgeARecordLeftOut(t *testing.T) {
	newRecord := func() *syncRecord {
		return &syncRecord{deadline: time.Now().Add(time.Minute), result: make(chan error, 2), taken: true}
	}
	left, kept := newRecord(), newRecord()
	exp := &awayOnceLogExporter{}
	p := NewSyncLogProcessor(exp, time.Minute)
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	exp.between = func() {
		p.mu.Lock()
		left.expired = true // its emitter's ctx ended, as in send
		p.mu.Unlock()
	}

	p.exportSplitting([]*syncRecord{left, kept}, time.Now().Add(time.Minute))

	assert.Equal(t, []int{2, 1}, exp.sizes, "the retry leaves the record out")
	assert.NoError(t, <-kept.result)
	assert.ErrorIs(t, <-left.result, errSyncDeadline)
}

// awayCtxExporter ends with its ctx (so an emitter exports inline) and
// finds the collector away on every export. Its first export runs first.
type awayCtxExporter struct {
	first func()
	calls int
}

func (e *awayCtxExporter) endsWithContext() {}

func (e *awayCtxExporter) Export(context.Context, []sdklog.Record) error {
	if e.calls++; e.calls == 1 {
		e.first()
	}
	return refusedDial()
}

func (e *awayCtxExporter) Shutdown(context.Context) error   { return nil }
func (e *awayCtxExporter) ForceFlush(context.Context) error { return nil }

// An emitter exporting its own record inline stops waiting when its ctx
// ends, as one waiting on the worker does: its record is not sent again,
// and it is told its ctx ended rather than waiting out the sync timeout.
func TestSyncInlineRetryEndsWithTheEmittersContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	exp := &awayCtxExporter{}
	p := NewSyncLogProcessor(exp, time.Minute)
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	exp.first = func() {
		cancel()
		// The ctx's end reaches the record before the attempt fails.
		for range 1000 {
			p.mu.Lock()
			ended := len(p.inflight) == 1 && p.inflight[0].expired
			p.mu.Unlock()
			if ended {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}

	var r sdklog.Record
	err := p.send(ctx, &r, time.Minute)

	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, exp.calls, "the record is not sent again")
}
