package sandboxauditreceiver

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// shutdownAsync runs the receiver's Shutdown and returns its result's
// channel.
func shutdownAsync(tr *testReceiver) <-chan error {
	done := make(chan error, 1)
	go func() { done <- tr.r.Shutdown(context.Background()) }()
	return done
}

func awaitShutdown(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown still waits for a client that trickles its body (read_timeout is 30s)")
	}
}

// TestShutdownCutsATricklingClient: a client that sent part of its body and
// stalls does not hold the collector's shutdown for read_timeout: after
// the grace period its connection is closed, unanswered, so it retries.
func TestShutdownCutsATricklingClient(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil)
	tr.r.shutdownGrace = 100 * time.Millisecond
	conn := openBody(t, tr, 1000, []byte(startJSON(1)[:20]), "")
	waitFor(t, "the server to read the request", func() bool {
		return tr.r.inflight.Count() == 1
	})

	awaitShutdown(t, shutdownAsync(tr))
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		_ = resp.Body.Close()
		assert.NotEqual(t, http.StatusOK, resp.StatusCode, "a body that never arrived is not acknowledged")
	}
	assert.Zero(t, logs.LogRecordCount())
	used, _ := tr.r.admit.InUse()
	assert.Zero(t, used)
}

// stubbornLogs holds its first ConsumeLogs call until release is closed,
// whatever its context says: a consumer that does not stop when canceled.
type stubbornLogs struct{ blockFirstLogs }

func (b *stubbornLogs) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	first := false
	b.once.Do(func() { first = true })
	if first {
		close(b.entered)
		<-b.release
	}
	return b.LogsSink.ConsumeLogs(ctx, ld)
}

// TestShutdownWaitsForADeliveryPastTheGrace: a request already handing its
// events to the pipeline when the grace period ends has its connection
// closed and its context canceled, but Shutdown still waits for its
// handler, so the exporters behind are not shut down under a delivery.
func TestShutdownWaitsForADeliveryPastTheGrace(t *testing.T) {
	logs := &stubbornLogs{blockFirstLogs{entered: make(chan struct{}), release: make(chan struct{})}}
	tr := startReceiver(t, logs, nil)
	tr.r.shutdownGrace = 50 * time.Millisecond
	release := sync.OnceFunc(func() { close(logs.release) })
	t.Cleanup(release)
	held := postHeld(t, tr.eventsURL(), contentTypeJSON, startJSON(1), &logs.blockFirstLogs)

	done := shutdownAsync(tr)
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) while a delivery was under way", err)
	case <-time.After(500 * time.Millisecond):
	}
	release()
	awaitShutdown(t, done)
	assert.Equal(t, 1, logs.LogRecordCount(), "the delivery finished before Shutdown returned")
	assert.NotEqual(t, http.StatusOK, <-held, "its connection was closed: the client was not told it succeeded")
}

// gateAuth is a server authenticator that holds each request until open
// is closed: a request still in confighttp's middleware.
type gateAuth struct {
	entered chan struct{}
	open    chan struct{}
}

func (gateAuth) Start(context.Context, component.Host) error { return nil }
func (gateAuth) Shutdown(context.Context) error              { return nil }

func (g gateAuth) Authenticate(ctx context.Context, _ map[string][]string) (context.Context, error) {
	g.entered <- struct{}{}
	<-g.open
	return ctx, nil
}

// TestShutdownWaitsForARequestInTheMiddleware: a request held by the auth
// middleware when the grace period ends is waited for like one in the
// handler; counted only once inside, it could let shutdown return, and the
// pipeline behind be shut down, before it delivered.
func TestShutdownWaitsForARequestInTheMiddleware(t *testing.T) {
	authID := component.MustNewID("gate")
	gate := gateAuth{entered: make(chan struct{}, 1), open: make(chan struct{})}
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	cfg.ServerConfig.Auth = configoptional.Some(confighttp.AuthConfig{Config: configauth.Config{AuthenticatorID: authID}})
	sink := new(consumertest.LogsSink)
	rcv, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), authHost{exts: map[component.ID]component.Component{authID: gate}}))
	r := unwrap(rcv)
	r.shutdownGrace = 50 * time.Millisecond
	openGate := sync.OnceFunc(func() { close(gate.open) })
	t.Cleanup(openGate)

	go func() {
		resp, err := http.Post("http://"+r.addr.String()+cfg.EventsPath, contentTypeJSON, strings.NewReader(startJSON(1)))
		if err == nil {
			_ = resp.Body.Close()
		}
	}()
	select {
	case <-gate.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the authenticator")
	}
	done := make(chan error, 1)
	go func() { done <- rcv.Shutdown(context.Background()) }()
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) with a request in the middleware", err)
	case <-time.After(500 * time.Millisecond):
	}
	openGate()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return once the request left")
	}
}
