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
