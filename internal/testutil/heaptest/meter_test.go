package heaptest

import (
	"runtime"
	"testing"
)

// TestMeterCountsWhatTheRunKeeps: memory still reachable at Stop is both
// in the peak and retained; memory dropped before Stop is not retained.
// (Whether the dropped memory shows in the peak depends on when the
// collector runs, so that is not checked.) The bounds leave room for the
// rest of the process's heap moving a little meanwhile.
func TestMeterCountsWhatTheRunKeeps(t *testing.T) {
	const size = 8 << 20
	m := Start()
	kept := make([]byte, size)
	f := m.Stop()
	runtime.KeepAlive(kept)
	if f.Peak < size*7/8 || f.Retained < size*7/8 {
		t.Fatalf("kept %d bytes: %+v", size, f)
	}

	m = Start()
	dropped := make([]byte, size)
	dropped[0] = 1
	if f := m.Stop(); f.Retained > size/8 {
		t.Fatalf("dropped %d bytes: %+v", size, f)
	}
}
