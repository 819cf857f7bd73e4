package filesink

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// errLockUnsupported means the filesystem has no flock (EINVAL, e.g. some
// NFS or FUSE mounts). Like the Python sink we then write without the
// cross-process lock rather than lose the batch.
var errLockUnsupported = errors.New("flock unsupported")

// lockExclusive takes flock(LOCK_EX) on fd. It polls with LOCK_NB so that a
// writer holding the lock forever cannot block past ctx.
func lockExclusive(ctx context.Context, fd int) error {
	delay := 20 * time.Microsecond
	var timer *time.Timer
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			if timer != nil {
				timer.Stop()
			}
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EINVAL):
			return errLockUnsupported
		case !errors.Is(err, unix.EWOULDBLOCK):
			return err
		}
		if timer == nil {
			timer = time.NewTimer(delay)
		} else {
			timer.Reset(delay)
		}
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
		if delay < 2*time.Millisecond {
			delay *= 2
		}
	}
}

func unlock(fd int) {
	// Closing the fd releases the lock too; an unlock error leaves nothing
	// to repair.
	_ = unix.Flock(fd, unix.LOCK_UN)
}
