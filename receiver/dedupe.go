package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"sync"

	"github.com/google/uuid"
)

// dedupeWindow remembers the event ids of the most recently delivered
// events, oldest forgotten first, so that an exporter's at-least-once replay
// does not duplicate the audit trail. Ids are only remembered once the next
// consumer accepted their batch (commit): a refused batch that the client
// retries must not be dropped as a duplicate of itself. While a batch is
// being delivered its ids are reserved, so that a client's resend racing
// its own first attempt is neither delivered twice nor dropped (the first
// attempt may still fail).
type dedupeWindow struct {
	mu       sync.Mutex
	seen     map[uuid.UUID]struct{}
	inFlight map[uuid.UUID]struct{} // reserved by requests being delivered
	ring     []uuid.UUID            // insertion order; grows to capacity, then wraps
	next     int                    // ring slot to overwrite once the ring is full
	size     int
}

// maxDedupePrealloc caps the up-front map size for very large windows.
const maxDedupePrealloc = 1 << 20

func newDedupeWindow(size int) *dedupeWindow {
	// Sized for the full window up front (bounded by it anyway): a map that
	// grows while ids churn through it costs more per id.
	return &dedupeWindow{
		seen:     make(map[uuid.UUID]struct{}, min(size, maxDedupePrealloc)),
		inFlight: make(map[uuid.UUID]struct{}),
		size:     size,
	}
}

// reserve marks, in dup, which of ids were committed before and reserves
// the others for the caller, who must then commit or release them. When
// another request holds one of them it reserves nothing and returns false.
// It takes the lock once for a whole batch.
func (d *dedupeWindow) reserve(ids []uuid.UUID, dup []bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, id := range ids {
		if _, ok := d.seen[id]; ok {
			dup[i] = true
		} else if _, ok := d.inFlight[id]; ok {
			clear(dup)
			return false
		}
	}
	for i, id := range ids {
		if !dup[i] {
			d.inFlight[id] = struct{}{}
		}
	}
	return true
}

// release gives up reserved ids that were not delivered; ids already
// committed are not affected.
func (d *dedupeWindow) release(ids []uuid.UUID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		delete(d.inFlight, id)
	}
}

// commit remembers reserved ids as delivered, evicting the oldest beyond
// the window size.
func (d *dedupeWindow) commit(ids []uuid.UUID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		delete(d.inFlight, id)
		if _, ok := d.seen[id]; ok {
			// Committed twice by a caller; one ring slot per id keeps
			// ring and map in step.
			continue
		}
		d.seen[id] = struct{}{}
		if len(d.ring) < d.size {
			d.ring = append(d.ring, id)
			continue
		}
		delete(d.seen, d.ring[d.next])
		d.ring[d.next] = id
		d.next = (d.next + 1) % d.size
	}
}

// len returns the number of remembered ids.
func (d *dedupeWindow) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.seen)
}
