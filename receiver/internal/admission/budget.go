package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"errors"
	"sync"
)

// ErrOverBudget is returned when the request bodies in flight already hold
// the budget: the client gets a 503 and retries.
var ErrOverBudget = errors.New("the collector is reading too many request bytes right now (max_inflight_bytes); retry later")

// Budget bounds the memory held by request bodies in flight. A request
// reserves buffer capacity before reading into it, in steps, and gives it
// all back when it has been answered, so the sum of what requests hold
// never exceeds the limit, however many connections there are and whatever
// their Content-Length says.
type Budget struct {
	mu    sync.Mutex
	limit int64
	used  int64
	peak  int64 // high-water mark of used, for tests and telemetry
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Reserve takes n bytes; false, taking nothing, if that would pass the limit.
func (b *Budget) Reserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	return true
}

// Release gives n reserved bytes back.
func (b *Budget) Release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}

// InUse returns what is reserved now and the high-water mark.
func (b *Budget) InUse() (used, peak int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.peak
}

// Limit is the budget's size.
func (b *Budget) Limit() int64 { return b.limit }
