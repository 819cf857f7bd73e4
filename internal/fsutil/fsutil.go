// Package fsutil holds the few file-system steps that make a write durable
// and exclusive on Linux: creating private directories, syncing a
// directory's entries, fdatasync that survives EINTR, and flock. The audit
// file sink and the spool both use them, so a fix lands in one place.
package fsutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MkdirAll creates dir and its missing parents with mode 0700 (audit data
// is private) and returns the directories it created, outermost first, so
// the caller can sync the parent of each (see SyncDir) when the new entries
// must survive a power loss. On error it returns what it created so far.
func MkdirAll(dir string) ([]string, error) {
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
		// ErrExist: another process created it meanwhile, which is fine.
		if err := os.Mkdir(missing[i], 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return created, err
		}
		created = append(created, missing[i])
	}
	return created, nil
}

// SyncDir makes dir's entries durable: a file created, renamed or removed
// in it is only on stable storage once the directory itself is synced.
func SyncDir(dir string) error {
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

// SyncParents syncs the parent directory of each directory in created (as
// returned by MkdirAll), so the new directories survive a power loss.
func SyncParents(created []string) error {
	for _, d := range created {
		if err := SyncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

// Fdatasync flushes f's data (and the metadata needed to read it back, such
// as its size) to stable storage, retrying when a signal interrupts it.
// Cheaper than f.Sync, which also flushes timestamps.
func Fdatasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
