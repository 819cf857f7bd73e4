package filesink

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

func threadIOPriority(t *testing.T) uintptr {
	t.Helper()
	p, _, errno := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, 0, 0)
	if errno != 0 {
		t.Skipf("ioprio_get: %v", errno)
	}
	return p
}

// The compressor's thread runs at the idle I/O class, and gets its class
// back afterwards.
func TestIdleIOPriorityRestores(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadIOPriority(t)
	restore := idleIOPriority()
	if got := threadIOPriority(t) >> ioprioClassShift; got != ioprioClassIdle {
		t.Fatalf("I/O class during compression = %d, want idle (%d)", got, ioprioClassIdle)
	}
	restore()
	if got := threadIOPriority(t); got != before {
		t.Fatalf("I/O priority after = %#x, want %#x as before", got, before)
	}
}
