package filesink

import (
	"golang.org/x/sys/unix"
)

// ioprio_set(2) arguments: the calling thread, and the idle class, which
// a disk scheduler such as mq-deadline or BFQ serves only when no other
// I/O waits (mq-deadline still ages it in after prio_aging_expire).
const (
	ioprioWhoProcess = 1
	ioprioClassShift = 13
	ioprioClassIdle  = 3
	// backgroundNice is the compressor thread's nice value: the kernel
	// gives a busy writer thread about nine tenths of a shared core.
	backgroundNice = 10
)

// lowerThreadPriority puts the calling thread in the idle I/O class and
// at backgroundNice. The caller must hold the thread
// (runtime.LockOSThread) and never release it, so the thread ends with
// its goroutine and no other goroutine ever runs at these priorities.
func lowerThreadPriority() {
	_, _, _ = unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, ioprioClassIdle<<ioprioClassShift)
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
