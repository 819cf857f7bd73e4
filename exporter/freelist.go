package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import "sync"

// freeBudget is how many bytes of buffers of a kind may wait for reuse.
// A count bound (it was four) made every push beyond the fourth
// concurrent one regrow its buffers from nothing: with eight senders that
// cost about 8 % more CPU per event (BenchmarkTracesToFileQueued). A byte
// bound keeps a buffer per concurrent push at usual batch sizes (about a
// megabyte per 1,000 spans) and still caps what an idle collector pins.
const freeBudget = 16 << 20

// freeList keeps batch buffers for reuse. Unlike a sync.Pool it is not
// emptied by every GC: a batch buffer regrown from nothing after each
// cycle costs copies, zeroing and page faults on every push, and the
// kernel copies a fresh buffer into the page cache more slowly as well.
type freeList[T any] struct {
	mu    sync.Mutex
	free  []kept[T]
	bytes int // the sum of the kept sizes
}

type kept[T any] struct {
	x    *T
	size int
}

func (l *freeList[T]) get() (*T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.free)
	if n == 0 {
		return nil, false
	}
	k := l.free[n-1]
	l.free[n-1] = kept[T]{}
	l.free = l.free[:n-1]
	l.bytes -= k.size
	return k.x, true
}

// put keeps x, which holds size bytes, unless that would take the list
// past freeBudget; x must be reset.
func (l *freeList[T]) put(x *T, size int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bytes+size <= freeBudget {
		l.free = append(l.free, kept[T]{x, size})
		l.bytes += size
	}
}
