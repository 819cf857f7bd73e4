package fsutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ReplaceFile replaces path with b durably and atomically: a reader, or a
// crash, sees the old content or the new, never a mix. It writes a new
// path+".tmp" (0600), syncs it, renames it over path and syncs the
// directory. Whatever had the temporary name is unlinked first and the
// file is created exclusively: opened with O_TRUNC, a hard link planted
// there had the spool itself overwritten with the sidecar's text.
func ReplaceFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := unix.Unlink(tmp); err != nil && !errors.Is(err, os.ErrNotExist) { // never a directory
		return &os.PathError{Op: "unlink", Path: tmp, Err: err}
	}
	f, _, err := OpenRegular(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = Fdatasync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	return SyncDir(filepath.Dir(path))
}
