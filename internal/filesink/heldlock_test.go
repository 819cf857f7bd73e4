package filesink

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestIntervalTimerPassesOverAFileAnotherProcessKeepsLocked: an outside
// writer holding one file's flock for long must not hold up the interval
// rotation of the others (nor, behind it on the maintainer's goroutine,
// every file's compression and retention): the timer passes over the
// locked file and looks at it again soon.
func TestIntervalTimerPassesOverAFileAnotherProcessKeepsLocked(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	var ev rotationEvents
	r := ev.hook(&Rotation{Interval: time.Hour})
	clock.drive(r)
	s, err := New(Options{Path: filepath.Join(dir, "{session_id}.jsonl"), Rotation: r})
	require.NoError(t, err)
	s.maint.stop() // the test runs the timer itself
	ctx := context.Background()
	const other = "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e"
	for _, id := range []string{testSession, other} {
		require.NoError(t, s.WriteBatch(ctx, id, numberedLines(1, 1)))
	}
	locked, err := s.PathFor(testSession)
	require.NoError(t, err)
	holder, err := os.OpenFile(locked, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer func() { _ = holder.Close() }()
	require.NoError(t, unix.Flock(int(holder.Fd()), unix.LOCK_EX))

	clock.add(time.Hour)
	done := make(chan time.Duration, 1)
	go func() { done <- s.rotateIdle(ctx) }()
	var next time.Duration
	select {
	case next = <-done:
	case <-time.After(10 * time.Second):
		require.NoError(t, unix.Flock(int(holder.Fd()), unix.LOCK_UN)) // let it return
		<-done
		t.Fatal("the interval timer waited for the lock another process holds")
	}
	require.Less(t, next, r.Interval, "the locked file is looked at again soon")
	ev.mu.Lock()
	rotated := append([]string(nil), ev.rotated...)
	ev.mu.Unlock()
	require.Len(t, rotated, 1)
	otherPath, err := s.PathFor(other)
	require.NoError(t, err)
	require.True(t, IsSegmentOf(rotated[0], otherPath), "%s", rotated[0])

	require.NoError(t, unix.Flock(int(holder.Fd()), unix.LOCK_UN))
	s.rotateIdle(ctx)
	require.Len(t, ev.rotated, 2, "rotated once the lock is free")
	require.NoError(t, s.Close())
	require.Empty(t, ev.errors(), "a busy lock is no failure")
}

// TestCompressionPassesOverASegmentAnotherProcessKeepsLocked: a closed
// segment whose flock an outside process keeps is left plain and looked
// at again later, rather than waited for by the one goroutine that
// compresses and retires every file's segments.
func TestCompressionPassesOverASegmentAnotherProcessKeepsLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	plain := namerFor(path).name(t0, 1)
	require.NoError(t, os.WriteFile(plain, numberedLines(1, 3), 0o600))
	seg, ok := namerFor(path).parse(filepath.Base(plain))
	require.True(t, ok)
	holder, err := os.Open(plain)
	require.NoError(t, err)
	defer func() { _ = holder.Close() }()
	require.NoError(t, unix.Flock(int(holder.Fd()), unix.LOCK_EX))

	type result struct {
		wait time.Duration
		err  error
	}
	done := make(chan result, 1)
	go func() {
		wait, err := compressSegment(context.Background(), &compressor{}, seg, t0.Add(time.Hour), time.Second, nil)
		done <- result{wait, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		require.NoError(t, unix.Flock(int(holder.Fd()), unix.LOCK_UN)) // let it return
		<-done
		t.Fatal("compression waited for the lock another process holds")
	}
	require.NoError(t, res.err)
	require.Positive(t, res.wait, "looked at again later")
	require.FileExists(t, plain)
	require.NoFileExists(t, plain+ZstdSuffix)
}
