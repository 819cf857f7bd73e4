package sandboxauditexporter

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// heldEndpoint blocks its first request until release is closed and
// refuses it (400: dropped, so the first write fails); it accepts the rest.
type heldEndpoint struct {
	arrived, release chan struct{}
	mu               sync.Mutex
	n                int
	accepted         strings.Builder
}

func newHeldEndpoint(t *testing.T) (*heldEndpoint, string) {
	t.Helper()
	h := &heldEndpoint{arrived: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		first := h.n == 0
		h.n++
		if !first {
			h.accepted.Write(body)
		}
		h.mu.Unlock()
		if first {
			close(h.arrived)
			<-h.release
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
	})
	return h, srv.URL
}

func (h *heldEndpoint) acceptedBodies() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.accepted.String()
}

// A span that carries a start event whose write-ahead copy is still being
// written waits for that write: when it fails, the span's copy is written,
// so the trail never holds the finish without its start.
func TestStartCopyWaitsForTheWriteInFlight(t *testing.T) {
	h, url := newHeldEndpoint(t)
	cfg := syncConfig()
	withHTTP(cfg, url, "ndjson", auditevent.PolicyOverride{})
	core, logs := observer.New(zapcore.DebugLevel)
	te := startExportersWithLogger(t, cfg, zap.New(core))
	ctx := context.Background()

	first := make(chan error, 1)
	go func() { first <- te.logs.ConsumeLogs(ctx, earlyExecStart()) }()
	select {
	case <-h.arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the write-ahead start never reached the endpoint")
	}
	second := make(chan error, 1)
	go func() { second <- te.traces.ConsumeTraces(ctx, buildTraces(t, sampleSpans()[0])) }()
	// The span either waits for the first write, or (the defect) is
	// answered while the start is not written yet.
	const waiting = "Waiting for another request's write of the same events"
	var answered error
	answeredEarly := false
	for deadline := time.Now().Add(30 * time.Second); logs.FilterMessage(waiting).Len() == 0; {
		select {
		case answered = <-second:
			answeredEarly = true
		case <-time.After(5 * time.Millisecond):
		}
		if answeredEarly {
			break
		}
		require.True(t, time.Now().Before(deadline), "the span neither waited nor was answered")
	}
	close(h.release)
	require.Error(t, <-first, "the endpoint refused the write-ahead start")
	if !answeredEarly {
		answered = <-second
	}
	require.NoError(t, answered)

	got := h.acceptedBodies()
	assert.Contains(t, got, `"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e"`, "the span's start, its first copy refused")
	assert.Contains(t, got, `"event_id":"1c0e9d8f-7a6b-4c5d-9e3f-2a1b0c9d8e7f"`)
}
