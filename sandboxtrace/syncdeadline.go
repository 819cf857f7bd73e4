package sandboxtrace

import (
	"context"
	"errors"
	"time"
)

// errSyncDeadline is what the watchdog sends a record whose wait is over.
var errSyncDeadline = errors.New("sync deadline passed")

// watchdog is a SyncLogProcessor's one timer. It is armed for the
// earliest deadline it was told of; records keep theirs, so most emits
// (whose deadline is later than the armed one) touch no timer at all.
// When it fires, expire fails what is due and arms it for what is left.
// Guarded by the processor's mu.
type watchdog struct {
	timer *time.Timer
	armed bool
	at    time.Time
	// The export in flight: cancelled once exportDeadline passes.
	exportDeadline time.Time
	cancelExport   context.CancelCauseFunc
}

// arm makes the timer fire by deadline.
func (w *watchdog) arm(deadline time.Time) {
	if w.armed && !deadline.Before(w.at) {
		return
	}
	w.armed, w.at = true, deadline
	w.timer.Reset(time.Until(deadline))
}

// expire sends errSyncDeadline to every record whose deadline has passed
// (withdrawing the ones no export took), cancels an export past its
// bound, and arms the timer for the earliest deadline left.
func (p *SyncLogProcessor) expire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	var next time.Time
	earliest := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	kept := p.waiting[:0]
	for _, sr := range p.waiting {
		if sr.deadline.After(now) {
			kept = append(kept, sr)
			earliest(sr.deadline)
			continue
		}
		sr.expired = true
		sr.result <- errSyncDeadline
	}
	clear(p.waiting[len(kept):])
	p.waiting = kept
	for _, sr := range p.inflight {
		switch {
		case sr.expired:
		case sr.deadline.After(now):
			earliest(sr.deadline)
		default:
			sr.expired = true
			sr.result <- errSyncDeadline
		}
	}
	if w := &p.watch; w.cancelExport != nil {
		if w.exportDeadline.After(now) {
			earliest(w.exportDeadline)
		} else {
			w.cancelExport(context.DeadlineExceeded)
		}
	}
	p.watch.armed = false
	if !next.IsZero() {
		p.watch.arm(next)
	}
}
