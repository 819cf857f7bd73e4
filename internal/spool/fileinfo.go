package spool

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func inode(f *os.File) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// fileID is the device and inode fi names, to count links of one file once.
func fileID(fi os.FileInfo) [2]uint64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]uint64{}
	}
	return [2]uint64{uint64(st.Dev), st.Ino} //nolint:unconvert // Dev is int32 on darwin
}
