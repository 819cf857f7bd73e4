package filesink

import (
	"golang.org/x/sys/unix"
)

// writebackStart starts writing fd's dirty bytes [off, off+n) back to
// the disk, without waiting.
func writebackStart(fd uintptr, off, n int64) {
	_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// writebackWait waits until fd's bytes [off, off+n) are written back.
func writebackWait(fd uintptr, off, n int64) {
	_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
}

// dropCache tells the kernel the plain segment's bytes [off, off+n),
// read once, are not needed again.
func dropCache(fd uintptr, off, n int64) {
	_ = unix.Fadvise(int(fd), off, n, unix.FADV_DONTNEED)
}
