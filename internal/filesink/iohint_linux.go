package filesink

import (
	"golang.org/x/sys/unix"
)

// backgroundNice is the compressor thread's nice value: the kernel gives
// a busy writer thread about nine tenths of a shared core. Its I/O keeps
// the normal class: the writers' fdatasync can wait on the compressed
// file's ordered data, so an idle-class compressor could stall them.
const backgroundNice = 10

// lowerThreadPriority sets the calling thread to backgroundNice. The
// caller must hold the thread (runtime.LockOSThread) and never release
// it, so the thread ends with its goroutine and no other goroutine ever
// runs at this priority.
func lowerThreadPriority() {
	_ = unix.Setpriority(unix.PRIO_PROCESS, 0, backgroundNice)
}

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
