package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/idwindow"
)

// eventIDWindow is how many event ids each of the exporter's windows
// remembers (≈60 B each, so ≈6 MB).
const eventIDWindow = 100_000

// newEventIDWindow is the window of event ids behind sinkIDs and startIDs.
func newEventIDWindow() *idwindow.Window[uuid.UUID] {
	w, err := idwindow.New[uuid.UUID](eventIDWindow)
	if err != nil {
		panic(err) // eventIDWindow is positive, so New cannot fail
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
// that). A resent batch is caught while it is among the last
// eventIDWindow events this collector run gave that sink.
type sinkIDs struct {
	w *idwindow.Window[uuid.UUID]
}

func newSinkIDs() *sinkIDs {
	return &sinkIDs{w: newEventIDWindow()}
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

// startIDs writes each start event once: write-ahead instrumentation
// (sandboxtrace/README.md, "Delivery modes") sends a start event early as a
// log record and again inside its span. One window serves both signals of a
// component, since they share one exporter. A write-ahead start record (logs
// path) and the span that later carries it (traces path) are usually seconds
// apart; the window covers an operation that outlives eventIDWindow other
// operation starts in the collector.
//
// Finish events join the window once the logs path has carried one: a
// sandboxtrace session with DeliverySyncFinish sends its finish ahead as a
// log record too. Until then the traces path pays nothing for finishes.
type startIDs struct {
	w        *idwindow.Window[uuid.UUID]
	finishes atomic.Bool
	// waiting, when set, is told when a batch starts waiting for another
	// write of its ids (the exporter logs it).
	waiting func()

	// mu is held across a batch's add to w and its flight's entry, and
	// across a failed write's removal from w and its flight's exit, so no
	// batch sees an id in w without seeing whether it is still in flight.
	mu      sync.Mutex
	flights map[*flight]struct{}
}

// flight is the ids a write added to the window before writing them.
type flight struct{ ids []uuid.UUID }

// finishAhead records that a logs-path batch carries finish events.
func (s *startIDs) finishAhead(events []auditevent.Event) {
	if s.finishes.Load() {
		return
	}
	for i := range events {
		if events[i].Phase == auditevent.PhaseFinish {
			s.finishes.Store(true)
			return
		}
	}
}

// windowed reports whether e's id goes through the window.
func (s *startIDs) windowed(e *auditevent.Event, finishes bool) bool {
	return e.Phase == auditevent.PhaseStart || finishes
}

func newStartIDs() *startIDs {
	return &startIDs{w: newEventIDWindow(), flights: map[*flight]struct{}{}}
}

// filter removes, in place, the windowed events whose id is already in the
// window, adds the others' ids and returns the kept events, the write's
// flight (for done, once the write succeeded or failed) and how many events
// it removed. While another write has one of the ids in flight (the copy
// that came first, still being written), filter waits for its outcome:
// answering this copy as a duplicate before the first is written would
// acknowledge an event that a failed write then loses. Three allocations
// per batch: the ids (compacted in place to the added ones), their fresh
// flags and the flight.
func (s *startIDs) filter(ctx context.Context, events []auditevent.Event) (kept []auditevent.Event, f *flight, dropped int, err error) {
	finishes := s.finishes.Load()
	n := 0
	for i := range events {
		if s.windowed(&events[i], finishes) {
			n++
		}
	}
	if n == 0 {
		return events, nil, 0, nil
	}
	ids := make([]uuid.UUID, 0, n)
	for i := range events {
		if s.windowed(&events[i], finishes) {
			ids = append(ids, events[i].EventID)
		}
	}
	fresh := make([]bool, n)
	if f, err = s.add(ctx, ids, fresh); err != nil {
		return nil, nil, 0, err
	}
	k, w := 0, 0 // next fresh flag, events kept so far
	for i := range events {
		if s.windowed(&events[i], finishes) {
			ok := fresh[k]
			k++
			if !ok {
				dropped++
				continue
			}
		}
		// Moved only once one was dropped: an event is a few hundred
		// bytes, and most batches drop none.
		if w != i {
			events[w] = events[i]
		}
		w++
	}
	clear(events[w:])
	return events[:w], f, dropped, nil
}

// add adds ids to the window as a flight (see tryAdd), waiting until no
// other write has any of them in flight, or until ctx ends.
func (s *startIDs) add(ctx context.Context, ids []uuid.UUID, fresh []bool) (*flight, error) {
	if f, ok := s.tryAdd(ids, fresh); ok {
		return f, nil
	}
	if s.waiting != nil {
		s.waiting()
	}
	// Polled, as fsutil.Lock polls a lock: a copy racing its first is rare,
	// and the first write ends within its own push's bound.
	delay := 20 * time.Microsecond
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for another request's write of the same events: %w", ctx.Err())
		case <-timer.C:
		}
		if f, ok := s.tryAdd(ids, fresh); ok {
			return f, nil
		}
		delay = min(2*delay, 2*time.Millisecond)
		timer.Reset(delay)
	}
}

// tryAdd adds to the window each of ids it lacks, setting fresh[i] for
// those, and returns them as a flight (ids is compacted in place to them).
// If another flight holds one of the ids the window had, it adds nothing,
// leaves fresh all false and returns false. A batch pays for the flights
// only when it has an id the window held: the common batch adds as a plain
// AddNew does.
func (s *startIDs) tryAdd(ids []uuid.UUID, fresh []bool) (*flight, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.AddNew(ids, fresh)
	if s.heldInFlight(ids, fresh) {
		// A new slice: ids stays whole for the next try.
		s.w.Remove(freshOnly(nil, ids, fresh)...)
		clear(fresh)
		return nil, false
	}
	f := &flight{ids: freshOnly(ids[:0], ids, fresh)}
	s.flights[f] = struct{}{}
	return f, true
}

// freshOnly appends to dst the ids whose fresh flag is set; dst may be
// ids[:0] (each id is read before its place is written).
func freshOnly(dst, ids []uuid.UUID, fresh []bool) []uuid.UUID {
	for i, ok := range fresh {
		if ok {
			dst = append(dst, ids[i])
		}
	}
	return dst
}

// heldInFlight reports whether an id the window had (not fresh) belongs to
// another write's flight; with s.mu held.
func (s *startIDs) heldInFlight(ids []uuid.UUID, fresh []bool) bool {
	if len(s.flights) == 0 || !slices.Contains(fresh, false) {
		return false
	}
	inFlight := make(map[uuid.UUID]struct{})
	for f := range s.flights {
		for _, id := range f.ids {
			inFlight[id] = struct{}{}
		}
	}
	for i, ok := range fresh {
		if _, held := inFlight[ids[i]]; !ok && held {
			return true
		}
	}
	return false
}

// done ends a write's flight: its ids stay in the window when it was
// written, and leave it after a failure, so a retry writes them.
func (s *startIDs) done(f *flight, err error) {
	if f == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.w.Remove(f.ids...)
	}
	delete(s.flights, f)
}
