package sandboxtrace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"
)

// bodiesServer is an OTLP/HTTP logs endpoint on 127.0.0.1 that counts the
// record bodies it acknowledged; hold, when set, delays each answer.
type bodiesServer struct {
	mu   sync.Mutex
	seen map[string]int
	hold chan struct{}
}

func (b *bodiesServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req collogs.ExportLogsServiceRequest
	if err != nil || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if b.hold != nil {
		<-b.hold
	}
	b.mu.Lock()
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				b.seen[lr.GetBody().GetStringValue()]++
			}
		}
	}
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf") // an empty ExportLogsServiceResponse
}

func startBodiesServer(t *testing.T, hold chan struct{}) (*bodiesServer, string) {
	t.Helper()
	b := &bodiesServer{seen: map[string]int{}, hold: hold}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	return b, srv.URL + "/v1/logs"
}

// With a DirectLogExporter emitters export on their own goroutines; many
// at once, and a Shutdown among them: every acknowledged record reached
// the server exactly once.
func TestSyncLogProcessorInlineExportsUnderShutdown(t *testing.T) {
	srv, url := startBodiesServer(t, nil)
	exp, err := NewDirectLogExporter(url)
	require.NoError(t, err)
	p := NewSyncLogProcessor(exp, 0)
	require.True(t, p.inline)

	const emitters, each = 8, 40
	acked := make([][]string, emitters)
	var wg sync.WaitGroup
	for i := range emitters {
		wg.Go(func() {
			for j := range each {
				body := fmt.Sprintf("%d-%d", i, j)
				if emitBody(context.Background(), p, body, 0) != nil {
					return // shut down
				}
				acked[i] = append(acked[i], body)
			}
		})
	}
	for range 1000 { // let some records through before shutting down
		srv.mu.Lock()
		n := len(srv.seen)
		srv.mu.Unlock()
		if n >= emitters*each/4 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, p.Shutdown(context.Background()))
	wg.Wait()

	srv.mu.Lock()
	defer srv.mu.Unlock()
	var n int
	for _, bodies := range acked {
		for _, b := range bodies {
			n++
			assert.Equal(t, 1, srv.seen[b], "record %s acknowledged", b)
		}
	}
	assert.Positive(t, n)
	for b, c := range srv.seen {
		assert.Equal(t, 1, c, "record %s sent once", b)
	}
}

// An emitter exporting on its own goroutine still fails once its sync
// timeout passes: the export's bound ends the request.
func TestSyncLogProcessorInlineTimeout(t *testing.T) {
	hold := make(chan struct{})
	_, url := startBodiesServer(t, hold)
	t.Cleanup(func() { close(hold) }) // before the server closes
	exp, err := NewDirectLogExporter(url)
	require.NoError(t, err)
	const timeout = 50 * time.Millisecond
	p := NewSyncLogProcessor(exp, timeout)
	defer func() { _ = p.Shutdown(context.Background()) }()

	err = emitBody(context.Background(), p, "late", timeout)
	require.ErrorIs(t, err, ErrStartNotRecorded)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
}

// heldCtxExporter is an exporter marked as ending with its ctx whose first
// Export waits for release; once shut down it fails every export.
type heldCtxExporter struct {
	release chan struct{}
	mu      sync.Mutex
	calls   int
	shut    bool
}

func (h *heldCtxExporter) Export(ctx context.Context, _ []sdklog.Record) error {
	h.mu.Lock()
	h.calls++
	first, shut := h.calls == 1, h.shut
	h.mu.Unlock()
	if first {
		select {
		case <-h.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if shut {
		return errProcessorShutdown
	}
	return nil
}

func (h *heldCtxExporter) isShut() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.shut
}

func (h *heldCtxExporter) Shutdown(context.Context) error {
	h.mu.Lock()
	h.shut = true
	h.mu.Unlock()
	return nil
}
func (h *heldCtxExporter) ForceFlush(context.Context) error { return nil }
func (h *heldCtxExporter) endsWithContext()                 {}

// A record queued behind an emitter's own export when Shutdown begins is
// still exported before the exporter is shut down.
func TestSyncLogProcessorShutdownWaitsForAnInlineExport(t *testing.T) {
	exp := &heldCtxExporter{release: make(chan struct{})}
	p := NewSyncLogProcessor(exp, time.Minute)
	errs := make(chan error, 2)
	go func() { errs <- emitBody(context.Background(), p, "leader", 0) }()
	waitFor := func(cond func() bool) {
		for range 2000 {
			if cond() {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor(func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.busy })
	go func() { errs <- emitBody(context.Background(), p, "queued", 0) }()
	waitFor(func() bool { p.mu.Lock(); defer p.mu.Unlock(); return len(p.waiting) == 1 })
	shut := make(chan error, 1)
	go func() { shut <- p.Shutdown(context.Background()) }()
	<-p.done                                     // the worker found the leader's export in flight and ended
	waitFor(func() bool { return exp.isShut() }) // bounded: shut only wrongly before release
	close(exp.release)
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	require.NoError(t, <-shut)
}
