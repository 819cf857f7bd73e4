package sandboxauditexporter

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// An endpoint that answers a replay 503, then hangs on the next: a
// shutdown whose deadline has passed cancels the replay request before it
// returns, sends nothing more, and leaves the spool closed with the lines
// in it, so an operator may move it aside at once.
func TestShutdownDuringReplayEndsTheRequest(t *testing.T) {
	var served atomic.Int32
	var shut atomic.Bool
	var late atomic.Int32
	replaying := make(chan struct{}, 1)
	cancelled := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if shut.Load() {
			late.Add(1)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		if served.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		select {
		case replaying <- struct{}{}:
		default:
		}
		<-r.Context().Done() // the replay hangs until the client gives up
		select {
		case cancelled <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(srv.Close)

	// One session's lines, spooled by an earlier run: event-format replay
	// posts a session's lines one at a time, so the request that hangs is
	// the only one in flight.
	spoolPath := filepath.Join(t.TempDir(), "spool.jsonl")
	want := oneSession(t, expectedDefault(t))
	sp, err := spool.Open(context.Background(), spool.Options{Path: spoolPath})
	require.NoError(t, err)
	require.NoError(t, sp.Append(context.Background(), []byte(strings.Join(want, ""))))
	require.NoError(t, sp.Close())

	cfg := syncConfig()
	hc := withHTTP(cfg, srv.URL, "event", auditevent.PolicyOverride{})
	sc := hc.Spool.GetOrInsertDefault()
	sc.Path = spoolPath
	sc.ReplayInterval = 20 * time.Millisecond
	require.NoError(t, cfg.Validate())
	f := NewFactory()
	ctx := context.Background()
	tr, err := f.CreateTraces(ctx, exportertestSettings(), cfg)
	require.NoError(t, err)
	lg, err := f.CreateLogs(ctx, exportertestSettings(), cfg)
	require.NoError(t, err)
	require.NoError(t, tr.Start(ctx, nopHost()))
	require.NoError(t, lg.Start(ctx, nopHost()))

	select {
	case <-replaying:
	case <-time.After(10 * time.Second):
		t.Fatal("the replay never reached the endpoint")
	}

	spent, cancel := context.WithCancel(ctx)
	cancel()
	require.NoError(t, tr.Shutdown(spent), "not the last user: nothing to stop yet")
	err = lg.Shutdown(spent)
	shut.Store(true)
	if err != nil {
		require.ErrorIs(t, err, context.Canceled)
	}
	// The replayer lets the spool go once it has ended, which Shutdown,
	// its context spent, does not wait for.
	require.Eventually(t, func() bool {
		sp, err = spool.Open(ctx, spool.Options{Path: sc.Path})
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "the spool is still held after Shutdown returned")
	require.True(t, sp.Pending(), "the lines are still to be replayed")
	require.NoError(t, sp.Close())
	require.Equal(t, want, readLines(t, sc.Path))

	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the endpoint never saw the replay request cancelled")
	}
	require.Zero(t, late.Load(), "a request reached the endpoint after Shutdown returned")
}

// oneSession keeps the lines of the first line's session.
func oneSession(t *testing.T, lines []string) []string {
	t.Helper()
	session := func(line string) string {
		var ev struct {
			SessionID string `json:"session_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &ev))
		return ev.SessionID
	}
	var out []string
	for _, l := range lines {
		if session(l) == session(lines[0]) {
			out = append(out, l)
		}
	}
	require.Greater(t, len(out), 1)
	return out
}
