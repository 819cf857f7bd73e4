package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import "time"

// windowSteps is how finely a rateWindow keeps arrivals: samples closer
// than window/windowSteps are merged, which may excuse a body for at most
// that long, and keeps a window's samples to about windowSteps.
const windowSteps = 8

// rateWindow checks that a body brings at least need bytes in every window
// of its life: bytes sent early buy no credit for later, so a client that
// sends most of a body fast and then trickles is cut one window after its
// last fast bytes, however many it sent.
type rateWindow struct {
	window  time.Duration
	need    int64 // bytes every window must bring
	total   int64
	samples []arrival // ascending; samples[0] may lie before the window
}

// arrival is the body's byte count at a time.
type arrival struct {
	at    time.Time
	total int64
}

func newRateWindow(start time.Time, rate int64, window time.Duration) *rateWindow {
	need := max(1, int64(float64(rate)*window.Seconds()))
	w := &rateWindow{window: window, need: need, samples: make([]arrival, 1, windowSteps+3)}
	w.samples[0] = arrival{at: start}
	return w
}

// add records n more bytes arrived at now.
func (w *rateWindow) add(now time.Time, n int) {
	w.total += int64(n)
	last := len(w.samples) - 1
	if last >= 1 && now.Sub(w.samples[last-1].at) < w.window/windowSteps {
		w.samples[last] = arrival{at: now, total: w.total}
	} else {
		w.samples = append(w.samples, arrival{at: now, total: w.total})
	}
	// A sample followed by one a window ago or older can no longer set the
	// deadline ahead of now.
	old := now.Add(-w.window)
	cut := 0
	for cut+1 < len(w.samples) && !w.samples[cut+1].at.After(old) {
		cut++
	}
	if cut > 0 {
		w.samples = append(w.samples[:0], w.samples[cut:]...)
	}
}

// deadline is when the window ending then would hold fewer than need
// bytes if nothing more arrives: one window after the earliest arrival
// that the bytes since fall short of need without.
func (w *rateWindow) deadline() time.Time {
	floor := w.total - w.need
	for _, s := range w.samples {
		if s.total > floor {
			return s.at.Add(w.window)
		}
	}
	return w.samples[len(w.samples)-1].at.Add(w.window)
}
