package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"errors"
	"net/netip"
	"sync"
	"time"
)

// ErrOverBudget is returned when the request bodies in flight already hold
// the budget, or the client's address holds its share of it: the client
// gets a 503 and retries.
var ErrOverBudget = errors.New("the collector is reading too many request bytes right now (max_inflight_bytes or small_body_inflight_bytes, shared per client address); retry later")

const (
	// waitingFor is how long an address refused, or served, counts as
	// sharing the budget after: clients retry after Retry-After (5 s), so
	// twice that covers one retry late by a whole interval, and a client
	// that sends a request every few seconds keeps its share between them.
	waitingFor = 10 * time.Second
	// maxWaiting bounds the addresses remembered as waiting; past it, new
	// ones are not remembered (and only the addresses holding bytes share).
	maxWaiting = 4096
	// pruneEvery spaces the sweeps of expired waiting addresses.
	pruneEvery = time.Second
)

// Budget bounds the memory held by request bodies in flight. A request
// reserves buffer capacity before reading into it, in steps, and gives it
// all back when it has been answered, so the sum of what requests hold
// never exceeds the limit, however many connections there are and whatever
// their Content-Length says.
//
// The limit is shared between client addresses: while k addresses hold
// bytes, or were refused or served within waitingFor, none may grow past
// limit/k (but always to floor, so one body of the largest size fits). An
// address that filled the budget alone cannot refill it once another is
// waiting, and what it holds drains as its requests end or are cut.
type Budget struct {
	mu    sync.Mutex
	limit int64
	floor int64
	used  int64
	peak  int64 // high-water mark of used, for tests and telemetry

	holders map[netip.Addr]int64 // bytes held by each address holding any
	waiting map[netip.Addr]time.Time
	// idleWaiting counts the waiting addresses that hold nothing, so that
	// the sharing addresses are len(holders)+idleWaiting.
	idleWaiting int
	pruned      time.Time
}

// NewBudget returns a budget of limit bytes, of which an address may always
// hold floor.
func NewBudget(limit, floor int64) *Budget {
	return &Budget{
		limit:   limit,
		floor:   min(floor, limit),
		holders: map[netip.Addr]int64{},
		waiting: map[netip.Addr]time.Time{},
	}
}

// Reserve takes n bytes for addr; false, taking nothing, if that would pass
// the limit or addr's share of it.
func (b *Budget) Reserve(addr netip.Addr, n int64) bool {
	if n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiting) > 0 {
		if now := time.Now(); now.Sub(b.pruned) >= pruneEvery {
			b.pruneLocked(now)
		}
	}
	held := b.holders[addr]
	if b.used+n > b.limit || held+n > b.shareLocked(addr, held) {
		b.markWaitingLocked(addr)
		return false
	}
	if held == 0 {
		if _, ok := b.waiting[addr]; ok {
			b.idleWaiting--
		}
	}
	b.holders[addr] = held + n
	b.used += n
	b.peak = max(b.peak, b.used)
	return true
}

// Release gives n bytes reserved for addr back.
func (b *Budget) Release(addr netip.Addr, n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	held := b.holders[addr] - n
	if held > 0 {
		b.holders[addr] = held
		return
	}
	delete(b.holders, addr)
	if _, ok := b.waiting[addr]; ok {
		b.idleWaiting++
	}
	b.markWaitingLocked(addr)
}

// shareLocked is the most addr (holding held) may hold now.
func (b *Budget) shareLocked(addr netip.Addr, held int64) int64 {
	k := int64(len(b.holders) + b.idleWaiting)
	if _, waits := b.waiting[addr]; held == 0 && !waits {
		k++ // a newcomer shares too
	}
	if k <= 1 {
		return b.limit
	}
	return max(b.limit/k, b.floor)
}

// markWaitingLocked remembers addr as sharing the budget for waitingFor
// from now.
func (b *Budget) markWaitingLocked(addr netip.Addr) {
	if _, known := b.waiting[addr]; !known {
		if len(b.waiting) >= maxWaiting {
			return
		}
		if _, holds := b.holders[addr]; !holds {
			b.idleWaiting++
		}
	}
	b.waiting[addr] = time.Now().Add(waitingFor)
}

// pruneLocked forgets the addresses whose wait has expired.
func (b *Budget) pruneLocked(now time.Time) {
	b.pruned = now
	for addr, until := range b.waiting {
		if now.Before(until) {
			continue
		}
		delete(b.waiting, addr)
		if _, holds := b.holders[addr]; !holds {
			b.idleWaiting--
		}
	}
}

// InUse returns what is reserved now and the high-water mark.
func (b *Budget) InUse() (used, peak int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.peak
}

// Held is what addr holds now.
func (b *Budget) Held(addr netip.Addr) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.holders[addr]
}

// Limit is the budget's size.
func (b *Budget) Limit() int64 { return b.limit }
