// Package fsutil holds the few file-system steps that make a write durable
// and exclusive on Linux: creating private directories, syncing a
// directory's entries, fdatasync that survives EINTR, flock, opening a
// path only if it is a regular file, reading a private key file, replacing a
// small file atomically, and reading a long file so that cancellation stops
// it.
// The file sink, the spool, the signing key and the CLI share them, so a
// fix lands in one place.
package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNotDir is MkdirAll's error when dir or a parent is a file: a caller
// taking the directory from a flag tells it from a failure to create one.
var ErrNotDir = errors.New("exists and is not a directory")

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
				return nil, fmt.Errorf("%s %w", d, ErrNotDir)
			}
			break
		}
		// ENOTDIR: a parent is a file; the walk up names it.
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
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

// ErrNotRegular marks a path OpenRegular refused: a FIFO, a device, a
// directory or a socket where a file was expected.
var ErrNotRegular = errors.New("not a regular file")

// CheckFiles refuses, for each non-empty path of files (keyed by the config
// key or flag that names it), anything in its place but a regular file (a
// symlink to one is fine): a FIFO named as a TLS file made the process hang
// in its read at start, deaf to SIGINT and SIGTERM. A missing file is left
// to whoever opens it.
func CheckFiles(files map[string]string) error {
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(files)) {
		path := files[key]
		if path == "" {
			continue
		}
		if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
			errs = append(errs, fmt.Errorf("%s: %s is %w (%s)", key, path, ErrNotRegular, fi.Mode().Type()))
		}
	}
	return errors.Join(errs...)
}

// OpenRegular opens path with flag and perm and refuses anything but a
// regular file, returning its FileInfo. O_NONBLOCK keeps a FIFO in the
// file's place from blocking the open until a peer comes (it hung verify
// past SIGTERM, and the collector's start); a regular file ignores it. Add
// unix.O_NOFOLLOW to flag where a symlink must not be followed.
func OpenRegular(path string, flag int, perm os.FileMode) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, flag|unix.O_NONBLOCK, perm)
	if err != nil {
		return nil, nil, withTildeHint(path, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is %w (%s)", path, ErrNotRegular, fi.Mode().Type())
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// withTildeHint adds to a missing path's error that a leading "~/" was
// taken as written: only a shell expands it, and a config or --key=~/…
// leaves it as is.
func withTildeHint(path string, err error) error {
	if strings.HasPrefix(path, "~/") && errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf(`%w ("~/" is not expanded; write the home directory's path)`, err)
	}
	return err
}

// CheckReadable opens each file of files (config key → path; empty paths
// are skipped) for reading and refuses one that cannot be, or is not a
// regular file, naming its key: the collector's own loaders name neither.
func CheckReadable(files map[string]string) error {
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(files)) {
		if files[key] == "" {
			continue
		}
		f, _, err := OpenRegular(files[key], os.O_RDONLY, 0)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
			continue
		}
		_ = f.Close()
	}
	return errors.Join(errs...)
}
