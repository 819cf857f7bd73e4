package filesink

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// The compressor's thread runs at a higher nice value; the thread that
// starts it keeps its own.
func TestLowerThreadPriority(t *testing.T) {
	type prio struct {
		nice int
		err  error
	}
	get := func() prio {
		raw, err := unix.Getpriority(unix.PRIO_PROCESS, 0) // 20 - nice
		return prio{nice: 20 - raw, err: err}
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
	if in.err != nil || in.nice != backgroundNice {
		t.Fatalf("compressor thread: nice %d, err %v; want nice %d", in.nice, in.err, backgroundNice)
	}
	if after := get(); after != before {
		t.Fatalf("calling thread's priorities changed: %+v, want %+v", after, before)
	}
}
