package spanmap

import (
	"container/list"
	"math"

	"github.com/google/uuid"
)

// seqCounters remembers, per session, the highest seq seen or assigned, for
// at most max sessions (least recently used out). Not safe for concurrent
// use; the Mapper's mutex guards it.
type seqCounters struct {
	max       int
	entries   map[uuid.UUID]*list.Element // Value is *seqEntry
	recent    list.List                   // front most recently used
	evictions int64
	assigned  assignedSeqs
}

type seqEntry struct {
	session uuid.UUID
	last    int64
}

func newSeqCounters(maxSessions int) *seqCounters {
	return &seqCounters{max: maxSessions, entries: make(map[uuid.UUID]*list.Element)}
}

// touch returns the session's entry, creating it (and evicting the least
// recently used one when full) and marking it most recently used.
func (c *seqCounters) touch(session uuid.UUID) *seqEntry {
	if el, ok := c.entries[session]; ok {
		c.recent.MoveToFront(el)
		return el.Value.(*seqEntry)
	}
	if len(c.entries) >= c.max && c.recent.Len() > 0 {
		// Reuse the evicted element and entry: steady state with many
		// sessions allocates nothing.
		el := c.recent.Back()
		e := el.Value.(*seqEntry)
		delete(c.entries, e.session)
		c.evictions++
		*e = seqEntry{session: session}
		c.recent.MoveToFront(el)
		c.entries[session] = el
		return e
	}
	e := &seqEntry{session: session}
	c.entries[session] = c.recent.PushFront(e)
	return e
}

// seq returns the given seq (and remembers it when it is the highest so
// far) or, when there is none, assigns the next one; false when the next
// one would pass the int64 range (the session's highest seq is the largest
// int64), where it would wrap to a negative number.
func (e *seqEntry) seq(given int64, has bool) (int64, bool) {
	if has {
		e.last = max(e.last, given)
		return given, true
	}
	if e.last == math.MaxInt64 {
		return 0, false
	}
	e.last++
	return e.last, true
}

// assignedWindow is how many of the last events given an assigned seq are
// remembered (about 100 bytes each).
const assignedWindow = 16_384

// assignedKey names an event given an assigned seq: its session and id.
type assignedKey struct{ session, event uuid.UUID }

// assignedSeqs remembers the seqs assigned to the last assignedWindow
// events, oldest out. A span mapped again (an exporter retrying a request
// marshals its spans again) is the same events, with the same ids: they get
// the seqs they got the first time, so the copy is exact.
type assignedSeqs struct {
	order []assignedKey // a ring once full; next is its oldest entry
	next  int
	seqs  map[assignedKey]int64
}

func (a *assignedSeqs) get(k assignedKey) (int64, bool) {
	s, ok := a.seqs[k]
	return s, ok
}

// put remembers k's seq; k is not remembered yet.
func (a *assignedSeqs) put(k assignedKey, seq int64) {
	if a.seqs == nil {
		a.seqs = make(map[assignedKey]int64)
	}
	if len(a.order) < assignedWindow {
		a.order = append(a.order, k)
	} else {
		delete(a.seqs, a.order[a.next])
		a.order[a.next] = k
		a.next = (a.next + 1) % assignedWindow
	}
	a.seqs[k] = seq
}

// seqOf returns the given seq of the event id of session e, or the seq
// assigned to that event before, or assigns it the next one.
func (c *seqCounters) seqOf(e *seqEntry, id uuid.UUID, given int64, has bool) (int64, bool) {
	if has {
		return e.seq(given, true)
	}
	k := assignedKey{session: e.session, event: id}
	if s, ok := c.assigned.get(k); ok {
		return s, true
	}
	s, ok := e.seq(0, false)
	if ok {
		c.assigned.put(k, s)
	}
	return s, ok
}
