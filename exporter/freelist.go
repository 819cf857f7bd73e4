package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import "sync"

// maxFree is how many batch buffers of a kind stay for reuse: one per
// concurrent push is enough for a couple of upstream callers or queue
// consumers; more pushes at once allocate.
const maxFree = 4

// freeList keeps a few batch buffers for reuse. Unlike a sync.Pool it is
// not emptied by every GC: a batch buffer (about a megabyte per 1,000
// spans) regrown from nothing after each cycle costs copies, zeroing and
// page faults on every push. The callers bound each buffer's size, so what
// stays pinned is small.
type freeList[T any] struct {
	mu   sync.Mutex
	free []*T
}

func (l *freeList[T]) get() (*T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.free)
	if n == 0 {
		return nil, false
	}
	x := l.free[n-1]
	l.free[n-1] = nil
	l.free = l.free[:n-1]
	return x, true
}

// put keeps x unless maxFree buffers wait already; x must be reset.
func (l *freeList[T]) put(x *T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.free) < maxFree {
		l.free = append(l.free, x)
	}
}
