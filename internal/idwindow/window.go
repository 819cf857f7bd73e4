// Package idwindow remembers the most recently added keys (event ids, in
// practice) in a fixed-size FIFO window, so a component can tell "I have
// already done this for that id" without memory that grows with traffic.
package idwindow

import (
	"fmt"
	"sync"
)

// Window is a bounded set of keys: once it holds Size keys, adding one
// forgets the oldest. Keys can also be removed early (an action that was
// recorded up front and then failed). It is safe for concurrent use.
type Window[K comparable] struct {
	mu   sync.Mutex
	seq  uint64       // stamp of the next added key
	live map[K]uint64 // key -> stamp of the ring slot that holds it
	ring []slot[K]    // insertion order; grows to size, then wraps
	next int          // ring slot to overwrite once the ring is full
	size int
}

type slot[K comparable] struct {
	key   K
	stamp uint64
}

// maxPrealloc caps the map's up-front size for very large windows.
const maxPrealloc = 1 << 16

// New returns a window of size keys; size must be positive.
func New[K comparable](size int) (*Window[K], error) {
	if size <= 0 {
		return nil, fmt.Errorf("idwindow: size must be positive (got %d)", size)
	}
	return &Window[K]{live: make(map[K]uint64, min(size, maxPrealloc)), size: size}, nil
}

// Size is the most keys the window holds.
func (w *Window[K]) Size() int { return w.size }

// Len is how many keys the window holds now.
func (w *Window[K]) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.live)
}

// Contains reports whether k is in the window.
func (w *Window[K]) Contains(k K) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.live[k]
	return ok
}

// Has reports, in present, which of keys the window holds (present[i] for
// keys[i]), under one lock.
func (w *Window[K]) Has(keys []K, present []bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, k := range keys {
		_, present[i] = w.live[k]
	}
}

// Add puts k in the window and reports whether it was absent. A key
// already present keeps its place (it is not refreshed).
func (w *Window[K]) Add(k K) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.addLocked(k)
}

// AddNew adds every key of keys that the window does not hold, under one
// lock, and reports in fresh which ones those were (fresh[i] for keys[i]; a
// key repeated within keys is fresh only the first time). Check and add
// are one step, so two callers racing with the same key cannot both see it
// as fresh.
func (w *Window[K]) AddNew(keys []K, fresh []bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, k := range keys {
		fresh[i] = w.addLocked(k)
	}
}

// AddAll adds every key of keys under one lock.
func (w *Window[K]) AddAll(keys ...K) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		w.addLocked(k)
	}
}

// Remove forgets keys (those absent are ignored), for an action recorded
// with Add or AddNew that then failed and may be done again.
func (w *Window[K]) Remove(keys ...K) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		delete(w.live, k)
	}
}

func (w *Window[K]) addLocked(k K) bool {
	if _, ok := w.live[k]; ok {
		return false
	}
	stamp := w.seq
	w.seq++
	if len(w.ring) < w.size {
		w.ring = append(w.ring, slot[K]{k, stamp})
		w.live[k] = stamp
		return true
	}
	// The slot's old key leaves the window, unless it was removed and
	// added again since (then it lives in a newer slot).
	old := w.ring[w.next]
	if s, ok := w.live[old.key]; ok && s == old.stamp {
		delete(w.live, old.key)
	}
	w.ring[w.next] = slot[K]{k, stamp}
	w.live[k] = stamp
	w.next = (w.next + 1) % w.size
	return true
}
