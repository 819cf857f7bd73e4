package spool

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// openFile opens one of the spool's files as a regular file without
// following a symlink planted in its place: the spool is replayed to the
// endpoint, so a link would send another file's lines out, and appends
// would land in it. It returns the file's FileInfo too.
func openFile(path string, flag int) (*os.File, os.FileInfo, error) {
	f, fi, err := fsutil.OpenRegular(path, flag|unix.O_NOFOLLOW, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, nil, fmt.Errorf("%s is a symlink, which the spool does not follow: %w", path, err)
	}
	return f, fi, err
}
