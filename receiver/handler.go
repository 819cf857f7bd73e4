package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Endpoints, the "endpoint" attribute of the receiver's metrics.
const (
	endpointTraces = "traces"
	endpointEvents = "events"
	endpointOther  = "other"
)

// maxPooledBody keeps one huge request from pinning its buffer forever.
const maxPooledBody = 4 << 20

// outcomeOverBudget: the bodies in flight hold max_inflight_bytes; 503.
const outcomeOverBudget = "over_budget"

func endpointOf(cfg *Config, path string) string {
	switch path {
	case cfg.TracesPath:
		return endpointTraces
	case cfg.EventsPath:
		return endpointEvents
	}
	return endpointOther
}

// handler adapts a reply-returning handler: it writes the reply and counts
// the request by endpoint, outcome and status code.
func (r *sandboxReceiver) handler(endpoint string, serve func(*http.Request) reply) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rp := serve(req)
		rp.write(w)
		r.recordRequest(req.Context(), endpoint, rp)
	})
}

func (r *sandboxReceiver) recordRequest(ctx context.Context, endpoint string, rp reply) {
	r.tel.SandboxauditReceiverRequests.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
		attribute.String("endpoint", endpoint),
		attribute.String("outcome", rp.outcome),
		attribute.Int("http.response.status_code", rp.status),
	)))
}

// mediaType returns the media type of the request without parameters
// (charset and the like), lowercased; "" when absent or unparsable.
func mediaType(req *http.Request) string {
	mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// Body buffer growth. A buffer grows only as data arrives: from
// minBodyBuf, doubling, by at most maxBodyStep at a time, so what a request
// holds is at most about twice what it actually sent, whatever its
// Content-Length claims. An honest Content-Length still saves the copies:
// growth stops exactly at it.
const (
	minBodyBuf  = 16 << 10
	maxBodyStep = 4 << 20
)

// requestBody is a request body read into a pooled buffer; held is the
// budget it reserved, given back by done once the request is answered
// (decoded data lives until then, so the reservation covers it too).
type requestBody struct {
	b    []byte
	held int64
	r    *sandboxReceiver
}

// recycle returns the buffer to the pool; its bytes must no longer be
// referenced. The reservation stays until done.
func (rb *requestBody) recycle() {
	if rb.b != nil && cap(rb.b) <= maxPooledBody {
		b := rb.b[:0]
		rb.r.bodyPool.Put(&b)
	}
	rb.b = nil
}

// done gives the reservation back.
func (rb *requestBody) done() {
	rb.r.budget.release(rb.held)
	rb.held = 0
}

// readBody reads the whole request body. Every byte of buffer capacity is
// reserved from max_inflight_bytes before data is read into it; past the
// budget it stops with errOverBudget (a 503 asking the client to retry).
// On success the caller must call done, and may recycle the buffer as soon
// as nothing refers to its bytes.
func (r *sandboxReceiver) readBody(req *http.Request) (*requestBody, error) {
	defer func() { _ = req.Body.Close() }() // read or refused: nothing more is wanted
	rb := &requestBody{r: r}
	if p, _ := r.bodyPool.Get().(*[]byte); p != nil {
		if r.budget.reserve(int64(cap(*p))) {
			rb.b, rb.held = (*p)[:0], int64(cap(*p))
		} // else: drop it; a smaller buffer may still fit
	}
	limit := r.maxBodySize() + 1 // +1: room to see EOF (or the size error) after a full body
	hint := -1
	if n := req.ContentLength; n >= 0 && n < limit {
		hint = int(n) + 1
	}
	for {
		if len(rb.b) == cap(rb.b) {
			next := nextBodyCap(cap(rb.b), int(limit), hint)
			if next <= cap(rb.b) || !r.budget.reserve(int64(next-cap(rb.b))) {
				rb.done()
				if next <= cap(rb.b) {
					return nil, &http.MaxBytesError{Limit: limit - 1}
				}
				return nil, errOverBudget
			}
			rb.held += int64(next - cap(rb.b))
			grown := make([]byte, len(rb.b), next)
			copy(grown, rb.b)
			rb.b = grown
		}
		n, err := req.Body.Read(rb.b[len(rb.b):cap(rb.b)])
		rb.b = rb.b[:len(rb.b)+n]
		if errors.Is(err, io.EOF) {
			return rb, nil
		}
		if err != nil {
			rb.done()
			return nil, err
		}
	}
}

// nextBodyCap is the capacity a full buffer of capacity cur grows to.
func nextBodyCap(cur, limit, hint int) int {
	next := min(max(minBodyBuf, 2*cur), cur+maxBodyStep)
	if hint > cur {
		next = min(next, hint)
	}
	return min(next, limit)
}

// maxBodySize is max_request_body_size as confighttp applies it.
func (r *sandboxReceiver) maxBodySize() int64 {
	if n := r.cfg.ServerConfig.MaxRequestBodySize; n > 0 {
		return n
	}
	return defaultMaxRequestBodySize
}

// readFailure answers a body that could not be read, in the intake's format.
func readFailure(err error, build replyBuilder) reply {
	if errors.Is(err, errOverBudget) {
		rp := build(http.StatusServiceUnavailable, outcomeOverBudget, errOverBudget.Error())
		rp.retryAfter = true
		return rp
	}
	return build(readErrorReply(err))
}
