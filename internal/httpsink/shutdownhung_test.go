package httpsink

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// TestShutdownReturnsAtItsDeadlineWhileTheSpoolHangs: a Send is spooling
// lines and the spool's fsync does not return (a hung disk). Shutdown
// returns the context's error once its deadline passes, and the Send does
// not report the lines taken until they are durable: when the fsync
// finally fails, they go back to the caller.
func TestShutdownReturnsAtItsDeadlineWhileTheSpoolHangs(t *testing.T) {
	srv := newTestServer(t)
	srv.down() // every post fails, so Send spools
	syncing := make(chan struct{}, 1)
	release := make(chan struct{})
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	sp, err := spool.Open(context.Background(), spool.Options{Path: path, Sync: func(*os.File) error {
		select {
		case syncing <- struct{}{}:
		default:
		}
		<-release
		return errors.New("disk gone")
	}})
	require.NoError(t, err)
	sk, err := New(Settings{
		Client:   &http.Client{Timeout: 2 * time.Second},
		Endpoint: srv.URL,
		Format:   FormatNDJSON,
		Retry:    fastRetry(),
		Spool:    sp,
		Logger:   zap.NewNop(),
		Observer: newRecObserver(),
	})
	require.NoError(t, err)

	sent := make(chan error, 1)
	go func() { sent <- sk.Send(context.Background(), makeLines(t, uuid.New(), 1, 3, 10), 3) }()
	select {
	case <-syncing:
	case <-time.After(10 * time.Second):
		t.Fatal("the Send never reached the spool's fsync")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- sk.Shutdown(ctx) }()
	select {
	case err = <-shut:
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return after its deadline while the spool's fsync hangs")
	}
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case err := <-sent:
		t.Fatalf("the Send returned (%v) before its lines were durable", err)
	default:
	}

	close(release)
	released = true
	select {
	case err = <-sent:
	case <-time.After(10 * time.Second):
		t.Fatal("the Send never returned once the fsync did")
	}
	var re *RefusedError
	require.ErrorAs(t, err, &re, "lines the spool could not make durable go back to the caller")
	require.Equal(t, 3, re.Remaining)
	require.Eventually(t, func() bool {
		again, err := spool.Open(context.Background(), spool.Options{Path: path})
		if err == nil {
			require.NoError(t, again.Close())
		}
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "the spool is let go once the Send ends")
}
