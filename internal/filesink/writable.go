package filesink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// CheckWritable reports whether the sink could write at path now: a plain
// path's file, if it exists, must be writable, else the nearest existing
// directory on the way to it must be a directory this process may create
// entries in; a templated path's base directory the same. With inDir (the
// sink rotates: segments are made beside the file), a plain path's
// directory must take new entries even when the file exists. It creates
// nothing: files and directories are still made with the first event.
// The error does not name the key (the caller does).
func CheckWritable(path string, inDir bool) error {
	t, err := parseTemplate(path)
	if err != nil {
		return err
	}
	if t.static == "" {
		return checkDirWritable(t.base)
	}
	if _, err := os.Lstat(t.static); err != nil {
		return checkDirWritable(t.base)
	}
	if err := accessible(t.static, unix.W_OK); err != nil || !inDir {
		return err
	}
	return checkDirWritable(t.base)
}

// checkDirWritable walks up from dir to the first element that exists,
// which must be a directory this process may add entries to.
func checkDirWritable(dir string) error {
	for {
		fi, err := os.Stat(dir)
		switch {
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%s is not a directory", dir)
		case err == nil:
			return accessible(dir, unix.W_OK|unix.X_OK)
		case errors.Is(err, unix.ENOTDIR):
			// An element above dir is a file: find which.
		case !errors.Is(err, os.ErrNotExist):
			return err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

// accessible checks mode against the effective user and group, as an open
// or a mkdir would (a read-only mount included).
func accessible(path string, mode uint32) error {
	if err := unix.Faccessat(unix.AT_FDCWD, path, mode, unix.AT_EACCESS); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
