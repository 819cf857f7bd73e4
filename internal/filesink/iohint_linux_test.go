package filesink

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// The compressor's thread runs at the idle I/O class and a higher nice
// value; the thread that starts it keeps its own.
func TestLowerThreadPriority(t *testing.T) {
	type prio struct {
		io   uintptr
		nice int
		err  error
	}
	get := func() prio {
		io, _, errno := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, 0, 0)
		if errno != 0 {
			return prio{err: errno}
		}
		raw, err := unix.Getpriority(unix.PRIO_PROCESS, 0) // 20 - nice
		return prio{io: io, nice: 20 - raw, err: err}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := get()
	if before.err != nil {
		t.Skipf("thread priorities: %v", before.err)
	}
	inside := make(chan prio)
	go func() {
		runtime.LockOSThread() // never released: the thread ends with the goroutine
		lowerThreadPriority()
		inside <- get()
	}()
	in := <-inside
	if in.err != nil || in.io>>ioprioClassShift != ioprioClassIdle || in.nice != backgroundNice {
		t.Fatalf("compressor thread: I/O class %d, nice %d, err %v; want class %d (idle), nice %d",
			in.io>>ioprioClassShift, in.nice, in.err, ioprioClassIdle, backgroundNice)
	}
	if after := get(); after != before {
		t.Fatalf("calling thread's priorities changed: %+v, want %+v", after, before)
	}
}
