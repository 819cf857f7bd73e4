// Package idwindow remembers the most recently added keys (event ids, in
// practice) in a fixed-size FIFO window, so a component can tell "I have
// already done this for that id" without memory that grows with traffic.
// The receiver's dedupe and the exporter's per-sink and start-event checks
// all use its Window.
package idwindow

import (
	"fmt"
	"hash/maphash"
	"math/bits"
	"sync"
)

// Window is a bounded set of keys: once it holds Size keys, adding one
// forgets the oldest. Keys can also be removed early (an action that was
// recorded up front and then failed), or reserved while an action on them
// is under way (Reserve, Commit, Release). It is safe for concurrent use.
//
// It is an open-addressing table stamped with insertion order rather than
// a map plus a FIFO ring: a key is in the window while its stamp is among
// the last Size handed out, so the oldest key leaves without being looked
// up, and an add costs one probe sequence (one cache miss in practice, on a
// table far larger than the CPU caches) instead of four map operations.
type Window[K comparable] struct {
	mu    sync.Mutex
	seed  maphash.Seed // random per window: clients choose the ids
	size  int
	next  uint64    // stamp of the next added key
	slots []slot[K] // linear probing; len is a power of two ≥ 2·size
	used  int       // slots not empty: live, expired or removed

	reserved map[K]struct{} // keys between Reserve and Commit or Release

	touched uint64 // the sum of the loads homes makes ahead, stored only to keep them
}

type slot[K comparable] struct {
	key   K
	stamp uint64 // emptySlot, removedSlot, or the stamp of the add
}

const (
	emptySlot   = 0
	removedSlot = 1
	firstStamp  = 2
)

// New returns a window of size keys; size must be positive.
func New[K comparable](size int) (*Window[K], error) {
	if size <= 0 {
		return nil, fmt.Errorf("size must be positive (got %d)", size)
	}
	n := 1 << bits.Len(uint(2*size-1)) // the power of two ≥ 2·size
	return &Window[K]{seed: maphash.MakeSeed(), size: size, next: firstStamp, slots: make([]slot[K], max(n, 8))}, nil
}

// Size is the most keys the window holds.
func (w *Window[K]) Size() int { return w.size }

// Len is how many keys the window holds now (a scan: for tests).
func (w *Window[K]) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for i := range w.slots {
		if w.live(w.slots[i].stamp) {
			n++
		}
	}
	return n
}

// Contains reports whether k is in the window.
func (w *Window[K]) Contains(k K) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	at, _ := w.probe(k)
	return at >= 0
}

// Has reports, in present, which of keys the window holds (present[i] for
// keys[i]), under one lock.
func (w *Window[K]) Has(keys []K, present []bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, home := range w.homes(keys) {
		at, _ := w.probeFrom(keys[i], home)
		present[i] = at >= 0
	}
}

// Add puts k in the window and reports whether it was absent. A key
// already present keeps its place (it is not refreshed).
func (w *Window[K]) Add(k K) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.addFrom(k, w.home(k))
}

// AddNew adds every key of keys that the window does not hold, under one
// lock, and reports in fresh which ones those were (fresh[i] for keys[i]; a
// key repeated within keys is fresh only the first time). Check and add
// are one step, so two callers racing with the same key cannot both see it
// as fresh.
func (w *Window[K]) AddNew(keys []K, fresh []bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, home := range w.homes(keys) {
		fresh[i] = w.addFrom(keys[i], home)
	}
}

// AddAll adds every key of keys under one lock.
func (w *Window[K]) AddAll(keys ...K) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, home := range w.homes(keys) {
		w.addFrom(keys[i], home)
	}
}

// Remove forgets keys (those absent are ignored), for an action recorded
// with Add or AddNew that then failed and may be done again. The key's
// place in the FIFO order stays used, as if it had been added and aged.
func (w *Window[K]) Remove(keys ...K) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, home := range w.homes(keys) {
		if at, _ := w.probeFrom(keys[i], home); at >= 0 {
			w.slots[at].stamp = removedSlot // a tombstone: probes go on past it
		}
	}
}

// addFrom adds k, whose home slot is home, with w.mu held, and reports
// whether it was absent.
func (w *Window[K]) addFrom(k K, home int) bool {
	at, free := w.probeFrom(k, home)
	if at >= 0 {
		return false
	}
	if w.slots[free].stamp == emptySlot {
		w.used++
	}
	w.slots[free] = slot[K]{key: k, stamp: w.next}
	w.next++
	if w.used > len(w.slots)/4*3 {
		w.rebuild()
	}
	return true
}
