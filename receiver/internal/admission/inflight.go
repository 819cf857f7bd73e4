package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import "sync"

// Inflight counts the requests being served, so that shutdown can wait for
// the handlers of connections it closed. Unlike a sync.WaitGroup it may
// count up again while someone waits for it to reach zero.
type Inflight struct {
	mu      sync.Mutex
	n       int
	waiters []chan struct{}
}

// Add counts delta more requests (negative: fewer).
func (f *Inflight) Add(delta int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n += delta
	if f.n == 0 {
		for _, w := range f.waiters {
			close(w)
		}
		f.waiters = nil
	}
}

// Count is the requests being served now.
func (f *Inflight) Count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// Idle returns a channel closed once no request is being served.
func (f *Inflight) Idle() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := make(chan struct{})
	if f.n == 0 {
		close(c)
		return c
	}
	f.waiters = append(f.waiters, c)
	return c
}
