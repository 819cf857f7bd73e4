package httpsink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configretry"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// fastRetry retries quickly and gives up after 2s.
func fastRetry() configretry.BackOffConfig {
	return configretry.BackOffConfig{
		Enabled:         true,
		InitialInterval: 5 * time.Millisecond,
		MaxInterval:     20 * time.Millisecond,
		MaxElapsedTime:  2 * time.Second,
		Multiplier:      2,
	}
}

// discardServer is a loopback endpoint that reads every body and answers
// 204, closed at cleanup.
func discardServer(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func openSpool(t testing.TB, path string, maxSize int64) *spool.Spool {
	t.Helper()
	sp, err := spool.Open(context.Background(), spool.Options{Path: path, MaxSize: maxSize})
	require.NoError(t, err)
	return sp
}

// writeSpool makes a spool at path, as the exporter does, and appends b to
// its file as is (a torn line included): what an earlier run left.
func writeSpool(t testing.TB, path string, b []byte) {
	t.Helper()
	require.NoError(t, openSpool(t, path, 0).Close())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(b)
	require.NoError(t, errors.Join(err, f.Close()))
}

// spoolFileBytes reads the spool file itself (what a person would see).
func spoolFileBytes(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

type fixture struct {
	srv       *testServer
	sink      *Sink
	obs       *recObserver
	logs      *observer.ObservedLogs
	spoolPath string
	spool     *spool.Spool
}

type fixtureOpt func(*Settings)

// newFixture starts a server and a sink with a spool (unless noSpool) in
// a temp dir. The sink is shut down (bounded) at cleanup.
func newFixture(t *testing.T, format Format, withSpool bool, opts ...fixtureOpt) *fixture {
	t.Helper()
	f := &fixture{srv: newTestServer(t), obs: newRecObserver()}
	core, logs := observer.New(zap.DebugLevel)
	f.logs = logs
	set := Settings{
		Client:         &http.Client{Timeout: 2 * time.Second},
		Endpoint:       f.srv.URL,
		Format:         format,
		Retry:          fastRetry(),
		ReplayInterval: 20 * time.Millisecond,
		Logger:         zap.New(core),
		Observer:       f.obs,
	}
	if withSpool {
		f.spoolPath = filepath.Join(t.TempDir(), "spool.jsonl")
		f.spool = openSpool(t, f.spoolPath, 0)
		set.Spool = f.spool
	}
	for _, o := range opts {
		o(&set)
	}
	sk, err := New(set)
	require.NoError(t, err)
	f.sink = sk
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, sk.Shutdown(ctx))
	})
	return f
}

func (f *fixture) start(t *testing.T) {
	t.Helper()
	require.NoError(t, f.sink.Start(context.Background()))
}

// waitSpoolEmpty waits (bounded) until the replayer has drained the spool.
func (f *fixture) waitSpoolEmpty(t *testing.T) {
	t.Helper()
	waitDrained(t, f.spool, f.spoolPath)
}

// waitDrained waits (bounded) until nothing is pending and the file has
// been trimmed. Both are needed: the replayer persists the final offset
// (Pending turns false) a moment before it rewrites the file empty.
func waitDrained(t *testing.T, sp *spool.Spool, path string) {
	t.Helper()
	require.Eventually(t, func() bool {
		if sp.Pending() {
			return false
		}
		fi, err := os.Stat(path)
		return err == nil && fi.Size() == 0
	}, 15*time.Second, 10*time.Millisecond, "spool still holds %d bytes", sp.Size())
}

func sendCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func zapInt(k string, v int) zap.Field { return zap.Int(k, v) }
func zapString(k, v string) zap.Field  { return zap.String(k, v) }
func toString(v any) string            { return fmt.Sprint(v) }

// giveUpSoon is for tests where delivery is meant to fail: a short retry
// budget keeps them quick.
func giveUpSoon(s *Settings) { s.Retry.MaxElapsedTime = 300 * time.Millisecond }
