package filesink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// mkdirAll creates dir and missing parents with mode 0700 and returns the
// directories it created, outermost first.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return nil, fmt.Errorf("%s exists and is not a directory", d)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	created := make([]string, 0, len(missing))
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return created, err
		}
		created = append(created, missing[i])
	}
	return created, nil
}

// syncDir makes a directory's entries (a new file or subdirectory) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

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

func fdatasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
