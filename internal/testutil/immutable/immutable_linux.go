package immutable

import (
	"os"

	"golang.org/x/sys/unix"
)

// fsImmutableFL is FS_IMMUTABLE_FL, the inode flag chattr +i sets.
const fsImmutableFL = 0x10

// setFlag sets or clears file's immutable flag.
func setFlag(file string, on bool) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		return err
	}
	if on {
		flags |= fsImmutableFL
	} else {
		flags &^= fsImmutableFL
	}
	return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags))
}
