package integrity

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// noFollow keeps every open of a sidecar or the audit file from following a
// symlink planted in its place.
const noFollow = unix.O_NOFOLLOW

// lockFile takes flock(LOCK_EX) on fd, the same lock the file sink and the
// Python JsonlOutboxSink hold while appending, polling so ctx can end the
// wait. It reports false when the file system has no flock (EINVAL), as the
// file sink then writes without it.
func lockFile(ctx context.Context, fd int) (bool, error) {
	delay := 50 * time.Microsecond
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EINVAL):
			return false, nil
		case !errors.Is(err, unix.EWOULDBLOCK):
			return false, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
		if delay < 5*time.Millisecond {
			delay *= 2
		}
	}
}

func unlockFile(fd int) { _ = unix.Flock(fd, unix.LOCK_UN) }
