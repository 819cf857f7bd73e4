package sandboxtrace_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/loopback"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// closedPort returns a 127.0.0.1 address that refuses connections until
// the test listens on it again.
func closedPort(t *testing.T) string {
	t.Helper()
	addrs, err := loopback.FreeAddrs(1)
	require.NoError(t, err)
	return addrs[0]
}

// logsServerOn is a logsServer listening on l.
func logsServerOn(t *testing.T, l net.Listener) *logsServer {
	t.Helper()
	ls := &logsServer{}
	ls.srv = httptest.NewUnstartedServer(http.HandlerFunc(ls.serve))
	_ = ls.srv.Listener.Close()
	ls.srv.Listener = l
	ls.srv.Start()
	t.Cleanup(ls.srv.Close)
	return ls
}

// httpLogExporter is otlploghttp to addr, dialling through client.
func httpLogExporter(t *testing.T, addr string, client *http.Client) sdklog.Exporter {
	t.Helper()
	exp, err := otlploghttp.New(context.Background(), otlploghttp.WithEndpoint(addr),
		otlploghttp.WithInsecure(), otlploghttp.WithHTTPClient(client))
	require.NoError(t, err)
	return exp
}

// waitDials waits, bounded, until dials reaches n, failing if done
// delivers first: the export must still be trying.
func waitDials[T any](t *testing.T, dials *atomic.Int32, n int32, done <-chan T) {
	t.Helper()
	deadline := time.Now().Add(flushBound)
	for dials.Load() < n {
		select {
		case got := <-done:
			t.Fatalf("the export ended after %d refused dials: %v", dials.Load(), got)
		case <-time.After(10 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "only %d dials", dials.Load())
	}
}

// A collector restarting refuses connections for a while: otlploghttp
// calls that permanent, and a best-effort start record would be lost. The
// export goes again until the port takes it.
func TestLogProcessorSendsAgainWhileTheCollectorIsAway(t *testing.T) {
	h := catchOTelErrors(t)
	addr := closedPort(t)
	var dials atomic.Int32
	p := sandboxtrace.NewLogProcessor(httpLogExporter(t, addr, countingDials(&dials)))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	emitN(lp, 1)

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), flushBound)
		defer cancel()
		done <- lp.ForceFlush(ctx)
	}()
	waitDials(t, &dials, 3, done)
	l, err := net.Listen("tcp", addr) // the collector is back
	require.NoError(t, err)
	ls := logsServerOn(t, l)

	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(2 * flushBound):
		t.Fatal("ForceFlush did not return")
	}
	assert.Len(t, ls.records(), 1)
	assert.Zero(t, p.Lost())
	assert.Empty(t, h.all(), "nothing lost")
}

// startSandbox runs StartSandbox on s in the background and reports
// whether its function ran.
func startSandbox(s *sandboxtrace.Session) (<-chan error, *atomic.Bool) {
	ran := &atomic.Bool{}
	done := make(chan error, 1)
	go func() {
		done <- s.StartSandbox(context.Background(), func(context.Context) error { ran.Store(true); return nil })
	}()
	return done, ran
}

// A sync operation waits out a collector restart within its sync timeout:
// its start record goes again while the port refuses connections, and the
// operation runs once the collector acknowledged it.
func TestSyncOperationWaitsOutACollectorRestart(t *testing.T) {
	addr := closedPort(t)
	var dials atomic.Int32
	s := newRecorder(t).session(t, sandboxtrace.WithLogExporter(httpLogExporter(t, addr, countingDials(&dials))),
		sandboxtrace.WithDelivery(sandboxtrace.DeliverySync), sandboxtrace.WithSyncTimeout(5*time.Second))
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	done, ran := startSandbox(s)
	waitDials(t, &dials, 3, done)
	assert.False(t, ran.Load(), "ran before its start was recorded")
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	ls := logsServerOn(t, l)

	require.NoError(t, waitDone(t, "the operation", done))
	assert.True(t, ran.Load())
	assert.Len(t, ls.records(), 1)
}

// cutFirst is a listener that closes its first n connections unread, as
// a collector killed as it reads: those requests get no reply.
type cutFirst struct {
	net.Listener
	n    int32
	cuts atomic.Int32
}

func (c *cutFirst) Accept() (net.Conn, error) {
	for {
		conn, err := c.Listener.Accept()
		if err != nil || c.cuts.Add(1) > c.n {
			return conn, err
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, not a clean close
		}
		_ = conn.Close()
	}
}

// DirectLogExporter behind a SyncLogProcessor (the emitter exporting
// inline): requests cut before any reply go again within the sync timeout.
func TestSyncDirectOperationWaitsOutCutConnections(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cut := &cutFirst{Listener: l, n: 3}
	ls := logsServerOn(t, cut)
	s := newRecorder(t).session(t, sandboxtrace.WithLogExporter(newDirect(t, "http://"+l.Addr().String()+"/v1/logs")),
		sandboxtrace.WithDelivery(sandboxtrace.DeliverySync), sandboxtrace.WithSyncTimeout(5*time.Second))
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	done, ran := startSandbox(s)
	require.NoError(t, waitDone(t, "the operation", done))
	assert.True(t, ran.Load())
	assert.Greater(t, cut.cuts.Load(), int32(3))
	assert.Len(t, ls.records(), 1)
}

// A collector that does not come back within the sync timeout: the
// operation fails closed, its function not run.
func TestSyncOperationFailsClosedWhileTheCollectorStaysAway(t *testing.T) {
	s := newRecorder(t).session(t, sandboxtrace.WithLogExporter(newDirect(t, "http://"+closedPort(t)+"/v1/logs")),
		sandboxtrace.WithDelivery(sandboxtrace.DeliverySync), sandboxtrace.WithSyncTimeout(300*time.Millisecond))
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	done, ran := startSandbox(s)
	err := waitDone(t, "the operation", done)
	require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.False(t, ran.Load())
}

// A partial success that rejects nothing is a warning: the export
// succeeds, and the collector's message reaches the error handler,
// escaped and cut.
func TestDirectLogExporterReportsAWarning(t *testing.T) {
	h := catchOTelErrors(t)
	msg := "\x1b[2J slow disk " + strings.Repeat("x", 10_000)
	ls := newLogsServer(t, func(w http.ResponseWriter) {
		b, err := proto.Marshal(&collogs.ExportLogsServiceResponse{PartialSuccess: &collogs.ExportLogsPartialSuccess{
			ErrorMessage: msg,
		}})
		if err != nil {
			panic(err)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(b)
	})
	require.NoError(t, newDirect(t, ls.srv.URL+"/v1/logs").Export(context.Background(), oneRecord()))
	errs := h.all()
	require.Len(t, errs, 1)
	assert.ErrorContains(t, errs[0], `OTLP partial success: \x1b[2J slow disk xxx`)
	assert.ErrorContains(t, errs[0], "(0 log records rejected)")
	assert.Less(t, len(errs[0].Error()), 300)
}
