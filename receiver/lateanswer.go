package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// lateAnswer answers 503 for a handler still busy halfway through the time
// left to write its answer (after answerBy, before write_timeout): a
// pipeline that does not return when its context ends (an exporter in the
// middle of a write) would otherwise have its answer written past the
// server's write deadline, and the client would see the connection closed
// without one. The handler goes on and its own answer is dropped; what it
// delivers is committed as usual, so the client's retry gets it counted as
// duplicates (or 503 while it is still in flight).
type lateAnswer struct {
	mu       sync.Mutex
	answered bool
	timer    *time.Timer
}

// answerLate arms a lateAnswer for req, or returns nil without a write
// timeout.
func (r *sandboxReceiver) answerLate(w http.ResponseWriter, req *http.Request, endpoint string) *lateAnswer {
	wt := r.cfg.ServerConfig.WriteTimeout
	if wt <= 0 {
		return nil
	}
	la := &lateAnswer{}
	at := r.cfg.answerBy() + (wt-r.cfg.answerBy())/2
	la.timer = time.AfterFunc(at, func() {
		// Held while writing: the handler, returning, must not finish the
		// response under it.
		la.mu.Lock()
		defer la.mu.Unlock()
		if la.answered {
			return
		}
		la.answered = true
		rp := lateReply(req, endpoint)
		h := w.Header()
		// Whole and final: the handler still runs, so the connection
		// cannot be reused, and a response without a length would end
		// only when it returns.
		h.Set("Connection", "close")
		h.Set("Content-Length", strconv.Itoa(len(rp.body)))
		rp.write(w)
		_ = http.NewResponseController(w).Flush()
		r.recordRequest(req.Context(), endpoint, rp)
	})
	return la
}

// claim stops the timer and tells whether the handler is the first to
// answer; without a write timeout (nil) it always is.
func (la *lateAnswer) claim() bool {
	if la == nil {
		return true
	}
	la.timer.Stop()
	la.mu.Lock()
	defer la.mu.Unlock()
	if la.answered {
		return false
	}
	la.answered = true
	return true
}

// lateReply is the 503 of a request whose pipeline did not finish in time,
// in its intake's format.
func lateReply(req *http.Request, endpoint string) reply {
	rp := textReply(http.StatusServiceUnavailable, outcomeRefusedRetryable, downstreamMessage(http.StatusServiceUnavailable))
	if endpoint == endpointTraces {
		rp = otlpStatusReply(http.StatusServiceUnavailable, outcomeRefusedRetryable, mediaType(req), downstreamMessage(http.StatusServiceUnavailable))
	}
	rp.retryAfter = true
	return rp
}
