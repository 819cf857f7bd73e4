package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/idwindow"
)

// newEventIDWindow is the window of event ids behind sinkIDs and startIDs.
func newEventIDWindow(size int) *idwindow.Window[uuid.UUID] {
	w, err := idwindow.New[uuid.UUID](size)
	if err != nil {
		panic(err) // callers pass a positive constant, which cannot fail
	}
	return w
}

// eventIDs returns the ids of events[i] for each i of idx, or of every
// event when idx is nil.
func eventIDs(events []auditevent.Event, idx []int) []uuid.UUID {
	if idx == nil {
		ids := make([]uuid.UUID, len(events))
		for i := range events {
			ids[i] = events[i].EventID
		}
		return ids
	}
	ids := make([]uuid.UUID, len(idx))
	for j, i := range idx {
		ids[j] = events[i].EventID
	}
	return ids
}
