package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"sync"

	"github.com/google/uuid"
)

// dedupeWindow remembers the event ids of the most recently delivered
// events, oldest forgotten first, so that an exporter's at-least-once replay
// does not duplicate the audit trail. Ids are only remembered once the next
// consumer accepted their batch (commit): a refused batch that the client
// retries must not be dropped as a duplicate of itself.
type dedupeWindow struct {
	mu   sync.Mutex
	seen map[uuid.UUID]struct{}
	ring []uuid.UUID // insertion order; grows to capacity, then wraps
	next int         // ring slot to overwrite once the ring is full
	size int
}

// maxDedupePrealloc caps the up-front map size for very large windows.
const maxDedupePrealloc = 1 << 20

func newDedupeWindow(size int) *dedupeWindow {
	// Sized for the full window up front (bounded by it anyway): a map that
	// grows while ids churn through it costs more per id.
	return &dedupeWindow{seen: make(map[uuid.UUID]struct{}, min(size, maxDedupePrealloc)), size: size}
}

// containsAny marks, in dup, which of ids were committed before; it takes
// the lock once for a whole batch.
func (d *dedupeWindow) containsAny(ids []uuid.UUID, dup []bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, id := range ids {
		if _, ok := d.seen[id]; ok {
			dup[i] = true
		}
	}
}

// commit remembers ids, evicting the oldest beyond the window size.
func (d *dedupeWindow) commit(ids []uuid.UUID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		if _, ok := d.seen[id]; ok {
			// A concurrent request delivered it too; one ring slot per id
			// keeps ring and map in step.
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
