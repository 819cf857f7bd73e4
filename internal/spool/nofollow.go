package spool

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openFile opens one of the spool's files without following a symlink
// planted in its place: the spool is replayed to the endpoint, so a link
// would send another file's lines out, and appends would land in it.
func openFile(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s is a symlink, which the spool does not follow: %w", path, err)
	}
	return f, err
}
