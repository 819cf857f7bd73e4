package filesink

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fileBirth returns f's creation time where the file system records one
// (ext4, xfs, btrfs and tmpfs do), so an interval outlives a reopen.
func fileBirth(f *os.File) (time.Time, bool) {
	var st unix.Statx_t
	if err := unix.Statx(int(f.Fd()), "", unix.AT_EMPTY_PATH, unix.STATX_BTIME, &st); err != nil {
		return time.Time{}, false
	}
	if st.Mask&unix.STATX_BTIME == 0 {
		return time.Time{}, false
	}
	return time.Unix(st.Btime.Sec, int64(st.Btime.Nsec)), true
}

// changeTime returns the inode's change time, which a rename sets: for a
// segment whose rotation came after its last write, the rotation's time.
func changeTime(fi os.FileInfo) (time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(st.Ctim.Unix()), true
}
