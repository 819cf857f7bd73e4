package httpsink

import "sync"

// requests counts the HTTP requests in flight, so that Shutdown can wait
// for the ones it cancelled: a cancelled request ends at once, unlike
// spool work held by the disk.
type requests struct {
	mu   sync.Mutex
	n    int
	none *sync.Cond
}

func newRequests() *requests {
	r := &requests{}
	r.none = sync.NewCond(&r.mu)
	return r
}

func (r *requests) begin() {
	r.mu.Lock()
	r.n++
	r.mu.Unlock()
}

func (r *requests) end() {
	r.mu.Lock()
	r.n--
	if r.n == 0 {
		r.none.Broadcast()
	}
	r.mu.Unlock()
}

// wait returns once no request is in flight.
func (r *requests) wait() {
	r.mu.Lock()
	for r.n > 0 {
		r.none.Wait()
	}
	r.mu.Unlock()
}
