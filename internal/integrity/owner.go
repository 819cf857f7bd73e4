package integrity

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// OwnerLockSuffix names the lock file beside an audit path: whoever seals
// the path's log or writes its sidecars (a collector's sealer, or a
// `sandboxaudit log` command) holds flock on it for as long as it does, so
// a log has one sealer. Writers that only append lines never take it.
// Not ".lock": a .lock beside a log shipper's .offset would read as an
// HTTP sink's spool to the file sink.
const OwnerLockSuffix = ".sealer.lock"

// OwnerLockPath is the owner lock file of the audit file at path.
func OwnerLockPath(path string) string { return path + OwnerLockSuffix }

// ErrLogOwned is wrapped by the error of LockLog when another open file
// holds the path's owner lock.
var ErrLogOwned = errors.New("another collector (or a sandboxaudit log command) is sealing its log")

// OwnerLock is a held owner lock; Release lets it go.
type OwnerLock struct {
	f *os.File
	// Unsupported: the file system has no flock, so nothing is held and
	// nothing keeps a second sealer away.
	Unsupported bool
}

// LockLog takes the owner lock of the audit path without waiting. The lock
// file is created (or made) 0600 and never followed through a symbolic
// link. On a file system without flock it returns a lock with Unsupported
// set, as the file sink then writes without flock too.
func LockLog(path string) (*OwnerLock, error) {
	p := OwnerLockPath(path)
	f, fi, err := fsutil.OpenRegular(p, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s: owner lock %s is a symbolic link (not followed)", path, p)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: owner lock: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		// Whoever can open the lock can flock it and keep the log from
		// being sealed; it holds nothing anyone else needs to read.
		_ = f.Chmod(0o600)
	}
	switch err = fsutil.TryLock(int(f.Fd())); {
	case err == nil:
		return &OwnerLock{f: f}, nil
	case errors.Is(err, fsutil.ErrLockUnsupported):
		_ = f.Close()
		return &OwnerLock{Unsupported: true}, nil
	case errors.Is(err, fsutil.ErrLockHeld):
		err = fmt.Errorf("%s: %w (it holds %s)", path, ErrLogOwned, p)
	default:
		err = fmt.Errorf("%s: owner lock %s: %w", path, p, err)
	}
	_ = f.Close()
	return nil, err
}

// Release lets the lock go; safe on nil and twice.
func (o *OwnerLock) Release() {
	if o == nil || o.f == nil {
		return
	}
	_ = o.f.Close() // closing the last descriptor releases flock
	o.f = nil
}

// Lost reports whether the lock file at path's lock path is no longer the
// file held: removed or replaced by hand. flock binds to the open file, so
// another process could then lock a new file at the path.
func (o *OwnerLock) Lost(path string) bool {
	if o == nil || o.f == nil {
		return false
	}
	at, err := os.Lstat(OwnerLockPath(path))
	return err != nil || !o.holds(at)
}

// holds reports whether fi is the lock file held.
func (o *OwnerLock) holds(fi os.FileInfo) bool {
	if o == nil || o.f == nil {
		return false
	}
	held, err := o.f.Stat()
	return err == nil && os.SameFile(held, fi)
}

// lockLogMkdir is LockLog for a sealer that starts before the file sink
// has made the path's directory: it makes it as the sink would (0700).
func lockLogMkdir(path string) (*OwnerLock, error) {
	o, err := LockLog(path)
	if errors.Is(err, os.ErrNotExist) {
		if _, merr := fsutil.MkdirAll(filepath.Dir(path)); merr != nil {
			return nil, fmt.Errorf("%s: owner lock: %w", path, merr)
		}
		o, err = LockLog(path)
	}
	return o, err
}
