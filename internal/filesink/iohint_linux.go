package filesink

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// ioprio_set(2) arguments: the calling thread, and the idle class, which
// a disk scheduler such as mq-deadline or BFQ serves only when no other
// I/O waits (mq-deadline still ages it in after prio_aging_expire).
const (
	ioprioWhoProcess = 1
	ioprioClassShift = 13
	ioprioClassIdle  = 3
)

// idleIOPriority gives the calling goroutine's thread the idle I/O class
// and returns the function that restores it. The goroutine keeps its
// thread meanwhile, so no other goroutine runs at that class; if the
// class cannot be restored the thread stays locked, and exits with the
// goroutine.
func idleIOPriority() (restore func()) {
	runtime.LockOSThread()
	old, _, errno := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, 0, 0)
	if errno != 0 {
		runtime.UnlockOSThread()
		return func() {}
	}
	if _, _, errno := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, ioprioClassIdle<<ioprioClassShift); errno != 0 {
		runtime.UnlockOSThread()
		return func() {}
	}
	return func() {
		if _, _, errno := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, old); errno == 0 {
			runtime.UnlockOSThread()
		}
	}
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
