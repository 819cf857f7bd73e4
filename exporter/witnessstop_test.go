package sandboxauditexporter

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// A witness request in flight when the collector stops (a checkpoint
// round's, to a witness that hangs) is cancelled and has ended when
// Shutdown returns; the shutdown checkpoint is submitted all the same, and
// one the witness did not cosign is submitted again at the next start
// (docs/witnesses.md).
func TestShutdownCancelsWitnessRequestInFlight(t *testing.T) {
	keyPath, pubPath := writeKeys(t)
	logKey, err := integrity.LoadVerifierKey(pubPath)
	require.NoError(t, err)
	fw := witnesstest.Start(t, "witness.example/w1", logKey)
	target, err := url.Parse(fw.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)

	// The first request hangs until the client gives up; the others get
	// 503 until healthy is set, then reach the witness.
	var served atomic.Int32
	var healthy, shut atomic.Bool
	var late atomic.Int32
	arrived := make(chan struct{}, 1)
	cancelled := make(chan struct{}, 1)
	quit := make(chan struct{})
	var quitOnce sync.Once
	release := func() { quitOnce.Do(func() { close(quit) }) }
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if shut.Load() {
			late.Add(1)
		}
		switch {
		case served.Add(1) == 1:
			_, _ = io.Copy(io.Discard, r.Body) // the server watches the connection once the body is read
			arrived <- struct{}{}
			select {
			case <-r.Context().Done():
				cancelled <- struct{}{}
			case <-quit:
			}
		case healthy.Load():
			proxy.ServeHTTP(w, r)
		default:
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(front.Close)
	t.Cleanup(release)

	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	ic := withIntegrity(cfg, keyPath)
	ic.CheckpointInterval = 20 * time.Millisecond
	cc := confighttp.NewDefaultClientConfig()
	cc.Endpoint = front.URL
	cc.Timeout = integrity.RoundTimeout(ic.CheckpointInterval) // only a cancellation ends the hanging request
	ic.Witnesses = append(ic.Witnesses, WitnessConfig{ClientConfig: cc, PublicKey: fw.VKey})

	te := startWitnessedExporters(t, cfg, zap.NewNop())
	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no checkpoint round reached the witness")
	}

	stopped := make(chan error, 1)
	go func() { stopped <- te.traces.Shutdown(context.Background()) }()
	select {
	case err = <-stopped:
	case <-time.After(10 * time.Second):
		release() // let the old request end, so that the test can
		err = <-stopped
		t.Fatalf("Shutdown waited for the witness request in flight instead of cancelling it (it returned %v once released)", err)
	}
	shut.Store(true)
	te.done = true
	require.NoError(t, err)
	select {
	case <-cancelled:
	default:
		// The client ended the request before Shutdown returned; the
		// server sees that a moment later.
		select {
		case <-cancelled:
		case <-time.After(10 * time.Second):
			t.Fatal("the witness never saw its request cancelled")
		}
	}
	require.Zero(t, late.Load(), "a witness request arrived after Shutdown returned")
	require.GreaterOrEqual(t, served.Load(), int32(2), "the shutdown checkpoint was submitted")
	_, err = os.Stat(integrity.WitnessedPath(path))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing cosigned yet")

	// The next start submits the newest checkpoint again.
	healthy.Store(true)
	shut.Store(false)
	again := startWitnessedExporters(t, cfg, zap.NewNop())
	again.shutdown(t)
	rec := lastWitnessedRecord(t, path)
	c, err := integrity.OpenCheckpoint(rec, logKey)
	require.NoError(t, err)
	require.Equal(t, int64(len(readLines(t, path))), c.N)
	v, err := witness.ParseKey(fw.VKey)
	require.NoError(t, err)
	require.Equal(t, 1, witness.CountCosignatures(rec, []note.Verifier{v}))
}
