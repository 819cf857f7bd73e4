package sandboxtrace

import (
	"context"
	"net"
	"syscall"
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
		return &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
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
