// Package pairing pairs the start and finish events of operations that have
// no span behind them (events posted by the Python HttpProxySink) so that
// the receiver can turn each operation into one span. Memory is bounded: at
// most MaxPending starts, of at most MaxPendingBytes, wait for their finish,
// and none waits longer than PendingTimeout once the caller sweeps.
//
// The Pairer is pull-style: Add, Sweep and Flush append what became ready to
// a slice the caller passes in, so the caller can hand the resulting spans
// to its pipeline with its own context and see the pipeline's answer. There
// is no goroutine inside; the caller drives Sweep from its ticker.
package pairing

import (
	"container/list"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// Defaults for the zero Config.
const (
	DefaultMaxPending      = 10_000
	DefaultMaxPendingBytes = 64 << 20
	DefaultPendingTimeout  = 5 * time.Minute
)

// Config bounds the pending starts.
type Config struct {
	// MaxPending is how many starts may wait for their finish; when a new
	// start would exceed it, the oldest waiting start is given up as
	// incomplete. Non-positive means DefaultMaxPending.
	MaxPending int
	// MaxPendingBytes bounds the waiting starts' canonical lines (what
	// their data and strings take): a count alone let a thousand starts of
	// a megabyte each hold gigabytes. When a new start would exceed it,
	// the oldest waiting starts are given up as incomplete; a start larger
	// than the bound waits alone. Non-positive means DefaultMaxPendingBytes.
	MaxPendingBytes int64
	// PendingTimeout is how long a start may wait for its finish before
	// Sweep gives it up as incomplete. Non-positive means
	// DefaultPendingTimeout.
	PendingTimeout time.Duration
	// Now is the clock that stamps a start's arrival. Nil means time.Now;
	// tests inject their own.
	Now func() time.Time
}

// Pair is one operation ready to become a span. Finish is nil for a start
// given up as incomplete (timed out, evicted, replaced or flushed); Start is
// nil for a finish whose start was never seen or already given up.
type Pair struct {
	Start, Finish *auditevent.Event
}

// Stats are the Pairer's counters since New.
type Stats struct {
	// Pending is the number of starts waiting now, PendingBytes the size
	// of their canonical lines.
	Pending      int
	PendingBytes int64
	// Paired counts starts matched with their finish.
	Paired int64
	// Orphans counts finishes emitted without a start.
	Orphans int64
	// TimedOut counts starts given up by Sweep.
	TimedOut int64
	// Evicted counts starts given up to stay within MaxPending or
	// MaxPendingBytes.
	Evicted int64
	// Replaced counts starts given up because another start with the same
	// session and span id (and a different event id) arrived.
	Replaced int64
	// Duplicates counts starts dropped because the same start (same event
	// id) was already waiting: a redelivery, not a new operation.
	Duplicates int64
	// Flushed counts starts given up by Flush.
	Flushed int64
	// Mismatched counts finishes that found their start waiting but could
	// not share a span with it (see fits); both become half spans.
	Mismatched int64
}

// key identifies an operation: the events of one operation share the
// session and the span_id string.
type key struct {
	session uuid.UUID
	spanID  string
}

type entry struct {
	key     key
	start   auditevent.Event
	arrived time.Time
	size    int64 // the start's canonical line, for MaxPendingBytes
}

// Pairer matches starts with finishes. It is safe for concurrent use.
type Pairer struct {
	maxPending int
	maxBytes   int64
	timeout    time.Duration
	now        func() time.Time

	mu      sync.Mutex
	pending map[key]*list.Element // Value is *entry
	order   list.List             // arrival order: front oldest
	bytes   int64                 // sum of the pending entries' size
	stats   Stats
}

// New returns a Pairer with cfg's bounds.
func New(cfg Config) *Pairer {
	p := &Pairer{
		maxPending: cfg.MaxPending,
		maxBytes:   cfg.MaxPendingBytes,
		timeout:    cfg.PendingTimeout,
		now:        cfg.Now,
		pending:    make(map[key]*list.Element),
	}
	if p.maxPending <= 0 {
		p.maxPending = DefaultMaxPending
	}
	if p.maxBytes <= 0 {
		p.maxBytes = DefaultMaxPendingBytes
	}
	if p.timeout <= 0 {
		p.timeout = DefaultPendingTimeout
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p
}

// Add takes one event and appends to dst what became ready: the pair when e
// finishes a waiting start, a lone finish when it does not, or a start given
// up to make room. The Pairer keeps a shallow copy of e (data and strings are
// shared, so do not modify them afterwards).
func (p *Pairer) Add(dst []Pair, e *auditevent.Event) []Pair {
	now := p.now()
	k := key{session: e.SessionID, spanID: e.SpanID}
	size := int64(auditevent.EncodedLen(e)) // outside the lock: it reads the whole event

	p.mu.Lock()
	defer p.mu.Unlock()

	if e.Phase != auditevent.PhaseStart {
		finish := new(auditevent.Event)
		*finish = *e
		if el, ok := p.pending[k]; ok {
			en := p.remove(el)
			if !fits(&en.start, finish) {
				p.stats.Mismatched++
				return append(dst, Pair{Start: &en.start}, Pair{Finish: finish})
			}
			p.stats.Paired++
			return append(dst, Pair{Start: &en.start, Finish: finish})
		}
		p.stats.Orphans++
		return append(dst, Pair{Finish: finish})
	}

	if el, ok := p.pending[k]; ok {
		en := el.Value.(*entry)
		if en.start.EventID == e.EventID {
			p.stats.Duplicates++
			return dst
		}
		p.remove(el)
		p.stats.Replaced++
		dst = append(dst, Pair{Start: &en.start})
	}
	for len(p.pending) > 0 && (len(p.pending) >= p.maxPending || p.bytes+size > p.maxBytes) {
		old := p.remove(p.order.Front())
		p.stats.Evicted++
		dst = append(dst, Pair{Start: &old.start})
	}
	p.pending[k] = p.order.PushBack(&entry{key: k, start: *e, arrived: now, size: size})
	p.bytes += size
	return dst
}

// fits reports whether one span can carry both events: it has one op,
// version, trace and parent, which the finish would otherwise take from the
// start, changing its line; and two events need two event ids.
func fits(start, finish *auditevent.Event) bool {
	return start.Op == finish.Op && start.Version == finish.Version &&
		sameOpt(start.TraceID, finish.TraceID) && sameOpt(start.ParentSpanID, finish.ParentSpanID) &&
		start.EventID != finish.EventID
}

// sameOpt reports whether two optional strings are both null or equal.
func sameOpt(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Sweep gives up, as incomplete, every start that has waited
// PendingTimeout or longer at now, oldest first.
func (p *Pairer) Sweep(dst []Pair, now time.Time) []Pair {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Starts are kept in arrival order and all wait equally long, so the
	// expired ones are a prefix of the list.
	for el := p.order.Front(); el != nil; el = p.order.Front() {
		if now.Before(el.Value.(*entry).arrived.Add(p.timeout)) {
			break
		}
		old := p.remove(el)
		p.stats.TimedOut++
		dst = append(dst, Pair{Start: &old.start})
	}
	return dst
}

// Flush gives up every waiting start as incomplete, oldest first: at
// shutdown, so that no start is lost.
func (p *Pairer) Flush(dst []Pair) []Pair {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.order.Len() > 0 {
		old := p.remove(p.order.Front())
		p.stats.Flushed++
		dst = append(dst, Pair{Start: &old.start})
	}
	return dst
}

// Len returns the number of starts waiting for their finish.
func (p *Pairer) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}

// Stats returns the counters.
func (p *Pairer) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.stats
	st.Pending, st.PendingBytes = len(p.pending), p.bytes
	return st
}

// remove drops a waiting start from both the map and the arrival order and
// returns it.
func (p *Pairer) remove(el *list.Element) *entry {
	en := p.order.Remove(el).(*entry)
	delete(p.pending, en.key)
	p.bytes -= en.size
	return en
}
