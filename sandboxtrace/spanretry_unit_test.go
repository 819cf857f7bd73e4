package sandboxtrace

import (
	"context"
	"errors"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// refusingThenAway refuses its first export whole (a 400), then finds
// the collector gone: every later export fails to dial, the first of them
// only after stall. It counts the exports of each span by name.
type refusingThenAway struct {
	stall time.Duration
	mu    sync.Mutex
	calls int
	sent  map[string]int
}

func (e *refusingThenAway) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	for _, s := range spans {
		e.sent[s.Name()]++
	}
	switch e.calls {
	case 1:
		return errors.New("failed to send to http://127.0.0.1:4318/v1/traces: 400 Bad Request (body: (empty))")
	case 2:
		time.Sleep(e.stall)
	}
	return refusedDial()
}

// refusedDial is the error of a dial the collector's port refused.
func refusedDial() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
}

func (e *refusingThenAway) Shutdown(context.Context) error { return nil }

// Without an export timeout the retries of one export end together,
// retryFor after it began: the halves of a refused batch share that time,
// as the parts of a batch do, rather than each retrying for as long again.
// Here the first half's attempt outlasts the time: neither half is sent
// again.
func TestSpanRetriesShareOneWindowWithoutExportTimeout(t *testing.T) {
	const retryFor = 300 * time.Millisecond
	exp := &refusingThenAway{stall: retryFor, sent: map[string]int{}}
	c := &countingSpanExporter{SpanExporter: exp, retryFor: retryFor}
	spans := tracetest.SpanStubs{{Name: "a"}, {Name: "b"}}.Snapshots()

	err := c.ExportSpans(context.Background(), spans)
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.Equal(t, map[string]int{"a": 2, "b": 2}, exp.sent, "each span sent with the batch, then once in its half")
}

// The attempts are counted in the error, in the singular for one.
func TestExportRetryingCountsAttempts(t *testing.T) {
	refused := refusedDial()
	err := exportRetrying(context.Background(), time.Now(), func(context.Context) error { return refused })
	require.ErrorIs(t, err, refused)
	assert.Equal(t, "1 attempt: dial tcp: connection refused", err.Error())
}
