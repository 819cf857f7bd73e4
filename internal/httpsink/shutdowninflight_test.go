package httpsink

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// countingTransport counts the requests the client has in flight.
type countingTransport struct {
	rt       *http.Transport
	inFlight atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	return c.rt.RoundTrip(r)
}

// A replay request in flight when Shutdown's ctx has already ended (a
// shutdown deadline that ran out) is cancelled and waited for: once
// Shutdown returns nothing is in flight, the endpoint sees the request
// cancelled and no other arrives, and the spool, closed once the replayer
// has ended, still holds the lines for the next run. In event format a
// post in flight gets a grace period to land; a spent ctx ends it.
func TestShutdownEndsReplayRequestInFlight(t *testing.T) {
	for _, format := range []Format{FormatEvent, FormatNDJSON} {
		t.Run(string(format), func(t *testing.T) {
			arrived := make(chan struct{}, 1)
			cancelled := make(chan struct{}, 1)
			var shut atomic.Bool
			var late atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				if shut.Load() {
					late.Add(1)
				}
				_, _ = io.Copy(io.Discard, r.Body)
				select {
				case arrived <- struct{}{}:
				default:
				}
				<-r.Context().Done() // answers nothing until the client gives up
				select {
				case cancelled <- struct{}{}:
				default:
				}
			}))
			t.Cleanup(srv.Close)
			ct := &countingTransport{rt: &http.Transport{}}
			t.Cleanup(ct.rt.CloseIdleConnections)

			path := filepath.Join(t.TempDir(), "spool.jsonl")
			lines := makeLines(t, uuid.New(), 1, 3, 10)
			writeSpool(t, path, lines)
			sk, err := New(Settings{
				Client:         &http.Client{Transport: ct},
				Endpoint:       srv.URL,
				Format:         format,
				Retry:          fastRetry(),
				ReplayInterval: 20 * time.Millisecond,
				Spool:          openSpool(t, path, 0),
				Logger:         zap.NewNop(),
				Observer:       newRecObserver(),
			})
			require.NoError(t, err)
			require.NoError(t, sk.Start(context.Background()))
			select {
			case <-arrived:
			case <-time.After(10 * time.Second):
				t.Fatal("the replay request never arrived")
			}

			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err = sk.Shutdown(ctx)
			shut.Store(true)
			if err != nil {
				require.ErrorIs(t, err, context.Canceled)
			}
			require.Zero(t, ct.inFlight.Load(), "a request is still in flight after Shutdown returned")
			select {
			case <-cancelled:
			case <-time.After(10 * time.Second):
				t.Fatal("the endpoint never saw the replay request cancelled")
			}
			require.Zero(t, late.Load(), "a request reached the endpoint after Shutdown returned")
			require.Equal(t, string(lines), string(spoolFileBytes(t, path)), "the spool keeps the lines")
			// The replayer lets the spool go once it has ended, which
			// Shutdown, its deadline spent, does not wait for.
			var again *spool.Spool
			require.Eventually(t, func() bool {
				again, err = spool.Open(context.Background(), spool.Options{Path: path})
				return err == nil
			}, 10*time.Second, 10*time.Millisecond, "the spool is let go")
			require.True(t, again.Pending(), "the lines are still to be replayed")
			require.NoError(t, again.Close())
		})
	}
}

// Without a spool a live Send's request in flight when Shutdown's ctx has
// already ended is cancelled and waited for too: the lines go back to the
// caller before Shutdown returns.
func TestShutdownEndsLiveRequestInFlight(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	ct := &countingTransport{rt: &http.Transport{}}
	t.Cleanup(ct.rt.CloseIdleConnections)
	sk, err := New(Settings{
		Client:   &http.Client{Transport: ct},
		Endpoint: srv.URL,
		Format:   FormatNDJSON,
		Retry:    fastRetry(),
		Logger:   zap.NewNop(),
		Observer: newRecObserver(),
	})
	require.NoError(t, err)
	require.NoError(t, sk.Start(context.Background()))
	lines := makeLines(t, uuid.New(), 1, 3, 10)
	errc := make(chan error, 1)
	go func() { errc <- sk.Send(context.Background(), lines, 3) }()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never arrived")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = sk.Shutdown(ctx)
	if err != nil {
		require.ErrorIs(t, err, context.Canceled)
	}
	require.Zero(t, ct.inFlight.Load(), "a request is still in flight after Shutdown returned")
	select {
	case err = <-errc:
	default:
		t.Fatal("Send still running after Shutdown returned")
	}
	var re *RefusedError
	require.ErrorAs(t, err, &re)
	require.Equal(t, 3, re.Remaining)
}
