package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/idwindow"
)

// fileIDWindow is how many event ids the file sink remembers having
// written (≈60 B each, so ≈6 MB): a client resending a batch that the file
// already holds (its first attempt failed only in the HTTP sink, say with
// a full spool, and the receiver answered 503) does not append another
// copy, as long as the batch is among the last 100 000 events written by
// this collector run.
const fileIDWindow = 100_000

// fileIDs is the window of event ids the file sink wrote, kept only when
// an HTTP sink is configured too: only then can a push fail after its file
// write succeeded (a file-only push that fails wrote nothing, and the
// receiver's dedupe drops a timed-out client's resend of an accepted
// batch), so a file-only exporter does not pay for it. Ids are added
// only after their write succeeded, so the file never misses an event the
// window claims; two concurrent pushes of the same ids can both write
// (the receiver's in-flight reservation keeps its own clients from that).
type fileIDs struct {
	w *idwindow.Window[uuid.UUID]
}

func newFileIDs() *fileIDs {
	return &fileIDs{w: newEventIDWindow(fileIDWindow)}
}

// unwritten returns the events whose ids the window does not hold, and
// how many it left out. Without any left out (or without a window) it
// returns events itself.
func (f *fileIDs) unwritten(events []auditevent.Event) ([]auditevent.Event, int) {
	if f == nil {
		return events, 0
	}
	ids := eventIDs(events, nil)
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

// written records the ids of events now in the file: events[i] for each i
// of idx, or every event when idx is nil.
func (f *fileIDs) written(events []auditevent.Event, idx []int) {
	if f == nil {
		return
	}
	f.w.AddAll(eventIDs(events, idx)...)
}
