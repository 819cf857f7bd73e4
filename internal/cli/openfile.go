package cli

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openRegular opens name for reading and refuses anything but a regular
// file. O_NONBLOCK keeps the open of a FIFO from waiting for a writer (it
// then blocked verify beyond any signal); a regular file ignores the flag.
// Read a pipe through "-" and stdin instead.
func openRegular(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s); read a pipe as - from stdin", name, fi.Mode().Type())
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}
