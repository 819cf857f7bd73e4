package admission

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// A body must bring rate×window bytes in every window: before it has, the
// deadline is one window after its start.
func TestRateWindowGraceFromTheStart(t *testing.T) {
	w := newRateWindow(t0, 1000, 5*time.Second) // 5000 bytes a window
	if got := w.deadline(); !got.Equal(at(5)) {
		t.Fatalf("deadline of an empty body = %v, want start+5s", got.Sub(t0))
	}
	w.add(at(1), 4999)
	if got := w.deadline(); !got.Equal(at(5)) {
		t.Fatalf("deadline after 4999 bytes = %v, want start+5s", got.Sub(t0))
	}
}

// Sent fast and then trickled, a body is cut one window after its fast
// bytes, whatever their number: early bytes buy no credit. The old rule
// (start + bytes/rate) gave 20 MB at 16 KiB/s twenty minutes.
func TestRateWindowEarlyBytesBuyNoCredit(t *testing.T) {
	w := newRateWindow(t0, 16<<10, 5*time.Second)
	w.add(at(0.5), 20<<20)
	for s := 4.5; s < 30; s += 4 { // a byte every 4 s
		if d := w.deadline(); d.Before(at(s)) {
			if !d.Equal(at(5.5)) {
				t.Fatalf("cut at %v, want 5.5s (a window after the fast bytes)", d.Sub(t0))
			}
			return
		}
		w.add(at(s), 1)
	}
	t.Fatal("a trickle of a byte every 4 s was never cut")
}

// A body arriving steadily at the rate or faster is never cut; one that
// slows below it is cut within a window of slowing down.
func TestRateWindowSteadyAndSlowing(t *testing.T) {
	w := newRateWindow(t0, 1000, 5*time.Second)
	s := 0.0
	for ; s < 60; s += 0.1 { // 1100 B/s in reads of 110 bytes
		if d := w.deadline(); !d.After(at(s)) {
			t.Fatalf("steady body at 1100 B/s cut at %.1fs", s)
		}
		w.add(at(s), 110)
	}
	slowFrom := s
	for ; s < 120; s += 0.1 { // 500 B/s
		if d := w.deadline(); !d.After(at(s)) {
			if s-slowFrom > 5+0.7 { // a window, plus a merge step
				t.Fatalf("slowed at %.1fs, cut only at %.1fs", slowFrom, s)
			}
			if len(w.samples) > windowSteps+3 {
				t.Fatalf("%d samples kept", len(w.samples))
			}
			return
		}
		w.add(at(s), 50)
	}
	t.Fatal("a body at half the rate was never cut")
}

// A body that stops is cut a window after its last bytes.
func TestRateWindowStopped(t *testing.T) {
	w := newRateWindow(t0, 1, 5*time.Second)
	w.add(at(1), 100)
	w.add(at(2), 100)
	if got := w.deadline(); !got.Equal(at(7)) {
		t.Fatalf("deadline = %v, want 7s", got.Sub(t0))
	}
}
