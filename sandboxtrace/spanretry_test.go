package sandboxtrace_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// flushBound bounds every wait of these tests; the retries end well before.
const flushBound = 20 * time.Second

// spansServer is an OTLP/HTTP traces endpoint that counts the requests it
// reads and keeps the names of the spans in those it takes. reply answers
// request n (from 1) itself when it returns true.
type spansServer struct {
	mu       sync.Mutex
	requests int
	names    []string
	reply    func(w http.ResponseWriter, n int) bool
}

func (s *spansServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltrace.ExportTraceServiceRequest
	if err != nil || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests++
	n := s.requests
	s.mu.Unlock()
	if s.reply != nil && s.reply(w, n) {
		return
	}
	names, _ := spanNames(&req)
	s.mu.Lock()
	s.names = append(s.names, names...)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func (s *spansServer) seen() (requests int, names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, append([]string(nil), s.names...)
}

// serveOn serves h on l until the test ends.
func serveOn(t *testing.T, l net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: flushBound}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// startServer serves h on 127.0.0.1 until the test ends, and returns its
// address.
func startServer(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	serveOn(t, l, h)
	return l.Addr().String()
}

// countingDials is an HTTP client that counts its dials.
func countingDials(dials *atomic.Int32) *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// oneSpan ends one span named "op" on a provider exporting through
// NewSpanProcessor and otlptracehttp to addr with client, and returns the
// provider; the span waits for a ForceFlush.
func oneSpan(t *testing.T, addr string, client *http.Client, opts ...sdktrace.BatchSpanProcessorOption) *sdktrace.TracerProvider {
	t.Helper()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(addr),
		otlptracehttp.WithInsecure(), otlptracehttp.WithHTTPClient(client))
	require.NoError(t, err)
	opts = append([]sdktrace.BatchSpanProcessorOption{sdktrace.WithBatchTimeout(time.Hour)}, opts...)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sandboxtrace.NewSpanProcessor(exp, opts...)))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	_, sp := tp.Tracer("t").Start(context.Background(), "op")
	sp.End()
	return tp
}

// flush runs tp.ForceFlush in the background.
func flush(tp *sdktrace.TracerProvider) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), flushBound)
		defer cancel()
		done <- tp.ForceFlush(ctx)
	}()
	return done
}

// waitDone returns what done gives, or fails the test when what (a
// flush, an operation) did not return within twice flushBound.
func waitDone(t *testing.T, what string, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * flushBound):
		t.Fatalf("%s did not return", what)
		return nil
	}
}

// A collector restarting on its port refuses connections for a while:
// otlptracehttp calls that permanent, and the batch (the finish events of
// DeliverySync operations) would be lost. The export goes again until the
// port takes it.
func TestSpanProcessorSendsAgainWhileTheCollectorIsAway(t *testing.T) {
	h := catchOTelErrors(t)
	addr := closedPort(t)

	var dials atomic.Int32
	done := flush(oneSpan(t, addr, countingDials(&dials)))
	waitDials(t, &dials, 3, done)
	l, err := net.Listen("tcp", addr) // the collector is back
	require.NoError(t, err)
	srv := &spansServer{}
	serveOn(t, l, srv)

	require.NoError(t, waitDone(t, "ForceFlush", done))
	requests, names := srv.seen()
	assert.Equal(t, 1, requests)
	assert.Equal(t, []string{"op"}, names)
	assert.Empty(t, h.all(), "nothing lost")
}

// A reply is final: a 400 (the collector refused the spans' content) is
// not sent again, and the spans are reported lost.
func TestSpanProcessorDoesNotSendARefusalAgain(t *testing.T) {
	srv := &spansServer{reply: func(w http.ResponseWriter, _ int) bool {
		http.Error(w, "no", http.StatusBadRequest)
		return true
	}}

	var dials atomic.Int32
	err := waitDone(t, "ForceFlush", flush(oneSpan(t, startServer(t, srv), countingDials(&dials))))
	require.ErrorContains(t, err, "sandboxtrace: 1 span lost (1 in total): ")
	require.ErrorContains(t, err, "400 Bad Request")
	requests, _ := srv.seen()
	assert.Equal(t, 1, requests)
	assert.Equal(t, int32(1), dials.Load())
}

// A connection closed after the request went, before any reply (a
// collector killed as it reads): the request goes again. The spans may
// arrive twice, as here; the collector writes a span's start once and its
// finish as an exact copy (docs/guarantees.md, "Duplicates").
func TestSpanProcessorSendsAgainAfterACutConnection(t *testing.T) {
	srv := &spansServer{reply: func(w http.ResponseWriter, n int) bool {
		if n > 1 {
			return false
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return true
	}}

	var dials atomic.Int32
	require.NoError(t, waitDone(t, "ForceFlush", flush(oneSpan(t, startServer(t, srv), countingDials(&dials)))))
	requests, names := srv.seen()
	assert.Equal(t, 2, requests)
	assert.Equal(t, []string{"op"}, names, "the second request's")
}

// The retries end with the export's timeout, and the spans are reported
// lost with the number of attempts.
func TestSpanProcessorRetriesWithinTheExportTimeout(t *testing.T) {
	var dials atomic.Int32
	tp := oneSpan(t, closedPort(t), countingDials(&dials), sdktrace.WithExportTimeout(500*time.Millisecond))
	err := waitDone(t, "ForceFlush", flush(tp))
	require.ErrorContains(t, err, "sandboxtrace: 1 span lost (1 in total): ")
	require.ErrorContains(t, err, "attempts: ")
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.Greater(t, dials.Load(), int32(1))
}
