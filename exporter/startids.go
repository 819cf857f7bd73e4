package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/idwindow"
)

// startIDWindow is how many recent start event ids the exporter remembers
// (≈60 B each, so ≈6 MB). A write-ahead start record (logs path) and the
// span that later carries the same start event (traces path) are usually
// seconds apart; this covers an operation that outlives 100 000 other
// operation starts in the same collector.
const startIDWindow = 100_000

// startIDs writes each start event once: SPEC §8 instrumentation sends a
// start event early as a log record and again inside its span. One window
// serves both signals of a component, since they share one exporter.
type startIDs struct {
	w *idwindow.Window[uuid.UUID]
}

func newStartIDs() *startIDs {
	return &startIDs{w: newEventIDWindow(startIDWindow)}
}

// filter removes, in place, the start events whose id is already in the
// window, adds the others' ids and returns the kept events, the ids it
// added (to forget if the write fails, so a retry writes them) and how many
// events it removed. Two allocations per batch: the ids (compacted in place
// to the added ones) and their fresh flags.
func (s *startIDs) filter(events []auditevent.Event) (kept []auditevent.Event, added []uuid.UUID, dropped int) {
	n := 0
	for i := range events {
		if events[i].Phase == auditevent.PhaseStart {
			n++
		}
	}
	if n == 0 {
		return events, nil, 0
	}
	ids := make([]uuid.UUID, 0, n)
	for i := range events {
		if events[i].Phase == auditevent.PhaseStart {
			ids = append(ids, events[i].EventID)
		}
	}
	fresh := make([]bool, n)
	s.w.AddNew(ids, fresh)
	added = ids[:0]
	k, w := 0, 0 // next fresh flag, events kept so far
	for i := range events {
		if events[i].Phase == auditevent.PhaseStart {
			ok := fresh[k]
			k++
			if !ok {
				dropped++
				continue
			}
			added = append(added, events[i].EventID)
		}
		// Moved only once one was dropped: an event is a few hundred
		// bytes, and most batches drop none.
		if w != i {
			events[w] = events[i]
		}
		w++
	}
	clear(events[w:])
	return events[:w], added, dropped
}

// forget removes ids added by a write that failed.
func (s *startIDs) forget(ids []uuid.UUID) {
	if len(ids) > 0 {
		s.w.Remove(ids...)
	}
}
