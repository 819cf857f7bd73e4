package fsutil

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ReplaceFile replaces path with b durably and atomically: a reader, or a
// crash, sees the old content or the new, never a mix. It writes
// path+".tmp" (0600, never through a symlink), syncs it, renames it over
// path and syncs the directory.
func ReplaceFile(path string, b []byte) error {
	tmp := path + ".tmp"
	f, _, err := OpenRegular(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o600)
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
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}
