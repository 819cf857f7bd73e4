package spool

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openFile opens one of the spool's files without following a symlink
// planted in its place (the spool is replayed to the endpoint, so a link
// would send another file's lines out, and appends would land in it), and
// refuses anything but a regular file. O_NONBLOCK keeps a FIFO in its place
// from blocking the open; a regular file ignores the flag.
func openFile(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s is a symlink, which the spool does not follow: %w", path, err)
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		if err == nil {
			err = fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
		}
		return nil, err
	}
	return f, nil
}
