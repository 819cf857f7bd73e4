package integrity

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// noFollow keeps every open of a sidecar or the audit file from following a
// symlink planted in its place.
const noFollow = unix.O_NOFOLLOW

// openNoFollow is os.OpenFile whose refusal of a symlink (flag holds
// noFollow) says so, naming the path.
func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag, perm)
	return f, notFollowed(path, flag, err)
}

// openRegular is fsutil.OpenRegular whose refusal of a symlink (flag holds
// noFollow) says so, naming the path.
func openRegular(path string, flag int, perm os.FileMode) (*os.File, os.FileInfo, error) {
	f, fi, err := fsutil.OpenRegular(path, flag, perm)
	return f, fi, notFollowed(path, flag, err)
}

// SymlinkError is the refusal to open an audit file or a sidecar through a
// symbolic link planted in its place. O_NOFOLLOW reports it as ELOOP, whose
// text ("too many levels of symbolic links") reads as a loop of links.
type SymlinkError struct {
	Path string
	err  error
}

func (e *SymlinkError) Error() string {
	if isSidecarPath(e.Path) {
		return e.Path + " is a symbolic link, and an audit file's sidecars are never followed: put the regular file back in its place"
	}
	return e.Path + " is a symbolic link, and an audit file is never followed: put the regular file back in its place"
}

func (e *SymlinkError) Unwrap() error { return e.err }

func notFollowed(path string, flag int, err error) error {
	if err == nil || flag&noFollow == 0 || !errors.Is(err, unix.ELOOP) {
		return err
	}
	if fi, lerr := os.Lstat(path); lerr != nil || fi.Mode()&os.ModeSymlink == 0 {
		return err // a loop in a directory of the path: as it is
	}
	return &SymlinkError{Path: path, err: err}
}

func isSidecarPath(path string) bool {
	for _, s := range append(LogSidecarSuffixes(), OwnerLockSuffix) {
		if strings.HasSuffix(path, s) {
			return true
		}
	}
	return false
}
