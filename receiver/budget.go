package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"errors"
	"sync"
)

// errOverBudget is returned by readBody when the request bodies in flight
// already hold max_inflight_bytes: the client gets a 503 and retries.
var errOverBudget = errors.New("the collector is reading too many request bytes right now (max_inflight_bytes); retry later")

// byteBudget bounds the memory held by request bodies in flight. A request
// reserves buffer capacity before reading into it, in steps, and gives it
// all back when it has been answered, so the sum of what requests hold
// never exceeds the limit, however many connections there are and whatever
// their Content-Length says.
type byteBudget struct {
	mu    sync.Mutex
	limit int64
	used  int64
	peak  int64 // high-water mark of used, for tests and telemetry
}

func newByteBudget(limit int64) *byteBudget { return &byteBudget{limit: limit} }

// reserve takes n bytes; false, taking nothing, if that would pass the limit.
func (b *byteBudget) reserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	return true
}

func (b *byteBudget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}

// inUse returns what is reserved now and the high-water mark.
func (b *byteBudget) inUse() (used, peak int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.peak
}
