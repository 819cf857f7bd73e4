package fsutil

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

var (
	// ErrLockHeld is returned by TryLock when another open file holds the
	// lock.
	ErrLockHeld = errors.New("flock held by another open file")
	// ErrLockUnsupported means the filesystem has no flock (EINVAL, e.g.
	// some NFS or FUSE mounts).
	ErrLockUnsupported = errors.New("flock unsupported")
)

// TryLock takes flock(LOCK_EX) on fd without waiting: ErrLockHeld when
// another open file holds it, ErrLockUnsupported when the filesystem has
// no flock.
func TryLock(fd int) error {
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return ErrLockHeld
		case errors.Is(err, unix.EINVAL):
			return ErrLockUnsupported
		}
		return err
	}
}

// Lock takes flock(LOCK_EX) on fd, waiting for the holder. It polls
// TryLock so that a holder that never lets go cannot block past ctx.
func Lock(ctx context.Context, fd int) error {
	delay := 20 * time.Microsecond
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if err := TryLock(fd); !errors.Is(err, ErrLockHeld) {
			return err
		}
		if timer == nil {
			timer = time.NewTimer(delay)
		} else {
			timer.Reset(delay)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		if delay < 2*time.Millisecond {
			delay *= 2
		}
	}
}

// Unlock releases a lock taken by Lock or TryLock. Closing the fd releases
// it too, so an unlock error leaves nothing to repair.
func Unlock(fd int) {
	_ = unix.Flock(fd, unix.LOCK_UN)
}
