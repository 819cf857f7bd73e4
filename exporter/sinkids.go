package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/idwindow"
)

// sinkIDWindow is how many event ids a sink remembers having taken
// (≈60 B each, so ≈6 MB): a client resending a batch that the sink already
// holds does not give it another copy, as long as the batch is among the
// last 100 000 events this collector run gave that sink.
const sinkIDWindow = 100_000

// sinkIDs is the window of event ids one sink took (the file written, or
// the HTTP endpoint acknowledged or the spool kept), kept only when the
// exporter has both sinks: only then can a push fail after one of them
// took its events (the other failed, say the file's disk is full or the
// HTTP spool is), and the client's resend must not give the first another
// copy each time. A one-sink push that fails took nothing (the HTTP sink's
// halves aside), and the receiver's dedupe drops a timed-out client's
// resend of an accepted batch, so a one-sink exporter does not pay for
// it. Ids are added only after the sink took them, so it never misses an
// event the window claims; two concurrent pushes of the same ids can both
// write (the receiver's in-flight reservation keeps its own clients from
// that).
type sinkIDs struct {
	w *idwindow.Window[uuid.UUID]
}

func newSinkIDs() *sinkIDs {
	return &sinkIDs{w: newEventIDWindow(sinkIDWindow)}
}

// unwritten returns the events whose ids (eventIDs of events, computed
// once by the caller for both sinks) the window does not hold, and how
// many it left out. Without any left out (or without a window) it returns
// events itself.
func (f *sinkIDs) unwritten(events []auditevent.Event, ids []uuid.UUID) ([]auditevent.Event, int) {
	if f == nil {
		return events, 0
	}
	present := make([]bool, len(ids))
	f.w.Has(ids, present)
	n := 0
	for _, p := range present {
		if p {
			n++
		}
	}
	if n == 0 {
		return events, 0
	}
	out := make([]auditevent.Event, 0, len(events)-n)
	for i := range events {
		if !present[i] {
			out = append(out, events[i])
		}
	}
	return out, n
}

// written records the ids of events the sink now holds: events[i] for each i
// of idx, or every event when idx is nil.
func (f *sinkIDs) written(events []auditevent.Event, idx []int) {
	if f == nil {
		return
	}
	f.w.AddAll(eventIDs(events, idx)...)
}
