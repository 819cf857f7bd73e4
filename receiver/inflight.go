package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"sync"
	"time"
)

// defaultShutdownGrace is how long requests in flight get to finish at
// shutdown before their connections are closed.
const defaultShutdownGrace = 5 * time.Second

// inflight counts the requests being served, so that shutdown can wait for
// the handlers of connections it closed. Unlike a sync.WaitGroup it may
// count up again while someone waits for it to reach zero.
type inflight struct {
	mu      sync.Mutex
	n       int
	waiters []chan struct{}
}

func (f *inflight) add(delta int) {
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

// idle returns a channel closed once no request is being served.
func (f *inflight) idle() <-chan struct{} {
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
