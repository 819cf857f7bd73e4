package spanmap

import "github.com/google/uuid"

// seqCounters remembers, per session, the highest seq seen or assigned, for
// at most max sessions (least recently used out). Not safe for concurrent
// use; the Mapper's mutex guards it.
type seqCounters struct {
	max       int
	entries   map[uuid.UUID]*seqEntry
	head      *seqEntry // most recently used
	tail      *seqEntry // least recently used
	evictions int64
}

type seqEntry struct {
	session    uuid.UUID
	last       int64
	prev, next *seqEntry
}

func newSeqCounters(maxSessions int) *seqCounters {
	return &seqCounters{max: maxSessions, entries: make(map[uuid.UUID]*seqEntry)}
}

// touch returns the session's entry, creating it (and evicting the least
// recently used one when full) and marking it most recently used.
func (c *seqCounters) touch(session uuid.UUID) *seqEntry {
	if e, ok := c.entries[session]; ok {
		if c.head != e {
			c.unlink(e)
			c.pushFront(e)
		}
		return e
	}
	var e *seqEntry
	if len(c.entries) >= c.max && c.tail != nil {
		// Reuse the evicted entry: steady state with many sessions allocates nothing.
		e = c.tail
		c.unlink(e)
		delete(c.entries, e.session)
		c.evictions++
		*e = seqEntry{}
	} else {
		e = &seqEntry{}
	}
	e.session = session
	c.entries[session] = e
	c.pushFront(e)
	return e
}

// seq returns the given seq (and remembers it when it is the highest so
// far) or, when there is none, assigns the next one.
func (e *seqEntry) seq(given int64, has bool) int64 {
	if has {
		e.last = max(e.last, given)
		return given
	}
	e.last++
	return e.last
}

func (c *seqCounters) unlink(e *seqEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		c.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

func (c *seqCounters) pushFront(e *seqEntry) {
	e.next = c.head
	if c.head != nil {
		c.head.prev = e
	}
	c.head = e
	if c.tail == nil {
		c.tail = e
	}
}
