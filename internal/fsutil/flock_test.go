package fsutil

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// openTwice opens one file twice: two open file descriptions, between which
// flock arbitrates (as between two processes).
func openTwice(t *testing.T) (a, b *os.File) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "lock")
	a, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	b, err = os.OpenFile(p, os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a, b
}

func TestTryLockSaysHeld(t *testing.T) {
	a, b := openTwice(t)
	require.NoError(t, TryLock(int(a.Fd())))
	require.ErrorIs(t, TryLock(int(b.Fd())), ErrLockHeld)
	Unlock(int(a.Fd()))
	require.NoError(t, TryLock(int(b.Fd())))
}

func TestLockWaitsForTheHolder(t *testing.T) {
	a, b := openTwice(t)
	require.NoError(t, TryLock(int(a.Fd())))
	done := make(chan error, 1)
	go func() { done <- Lock(context.Background(), int(b.Fd())) }()
	select {
	case err := <-done:
		t.Fatalf("Lock returned %v while the lock was held", err)
	case <-time.After(50 * time.Millisecond):
	}
	Unlock(int(a.Fd()))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Lock did not return after the holder let go")
	}
}

func TestLockGivesUpWithTheContext(t *testing.T) {
	a, b := openTwice(t)
	require.NoError(t, TryLock(int(a.Fd())))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, Lock(ctx, int(b.Fd())), context.DeadlineExceeded)
}
