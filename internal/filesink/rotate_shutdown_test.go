package filesink

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// rotateIdleOnce rotates an idle file whose interval ran out, and the
// lock taken again after the rename fails with what after returns: a
// shutdown cancels ctx meanwhile, a real failure leaves it live. It
// returns the errors reported.
func rotateIdleOnce(t *testing.T, path string, after func(cancel context.CancelFunc) error) []error {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)}
	var ev rotationEvents
	r := ev.hook(&Rotation{Interval: time.Hour})
	clock.drive(r)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	locks := 0
	s, err := New(Options{Path: path, Rotation: r, lockFn: func(lctx context.Context, fd int) error {
		mu.Lock()
		locks++
		n := locks
		mu.Unlock()
		if n == 3 { // after the rename: the first write and the rotation took 1 and 2
			return after(cancel)
		}
		return unix.Flock(fd, unix.LOCK_EX)
	}})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(1, 2)))
	clock.add(time.Hour)
	rotateDue(ctx, s, path)
	require.NoError(t, s.Close())
	return ev.errors()
}

// A rotation cut short by shutdown while it waits for the lock after the
// rename is no error: the segment was renamed, and the next start
// writes to the path and looks after the segment.
func TestIdleRotationCutShortByShutdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	errs := rotateIdleOnce(t, path, func(cancel context.CancelFunc) error {
		cancel()
		return context.Canceled
	})
	require.Empty(t, errs)
	segs, err := Segments(path)
	require.NoError(t, err)
	require.Len(t, segs, 1, "the rename stays")

	r := &Rotation{Interval: time.Hour, Compress: true}
	r.grace = time.Millisecond
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(3, 4)))
	waitCompressed(t, path, 1)
	require.NoError(t, s.Close())
	segs, parts := readTrail(t, path)
	require.Len(t, segs, 1)
	require.Equal(t, string(numberedLines(1, 2)), string(parts[0]))
	require.Equal(t, string(numberedLines(3, 4)), string(parts[1]))
}

// The same failure with the sink running is reported.
func TestIdleRotationLockFailureReported(t *testing.T) {
	errLock := errors.New("lock failed")
	errs := rotateIdleOnce(t, filepath.Join(t.TempDir(), "events.jsonl"), func(context.CancelFunc) error { return errLock })
	require.Len(t, errs, 1)
	require.ErrorIs(t, errs[0], errLock)
}

// rotateDue runs the interval timer's rotation of path's open file, as
// the timer does: with a reference held.
func rotateDue(ctx context.Context, s *Sink, path string) {
	s.mu.Lock()
	of := s.files[path]
	of.refs++
	s.mu.Unlock()
	s.rotateIfDue(ctx, of)
	s.release(of)
}
