package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"mime"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Endpoints, the "endpoint" attribute of the receiver's metrics.
const (
	endpointTraces = "traces"
	endpointEvents = "events"
	endpointOther  = "other"
)

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
		rp := serve(r.paced(w, req))
		rp.write(w)
		r.recordRequest(req.Context(), endpoint, rp)
	})
}

// acceptedAttrs maps each endpoint to the attributes of an accepted
// request, built once (read only afterwards): building a set sorts and
// hashes it, which every successful request would otherwise pay for.
func acceptedAttrs() map[string]metric.AddOption {
	m := map[string]metric.AddOption{}
	for _, endpoint := range [...]string{endpointTraces, endpointEvents, endpointOther} {
		m[endpoint] = requestAttrs(endpoint, outcomeAccepted, http.StatusOK)
	}
	return m
}

func (r *sandboxReceiver) recordRequest(ctx context.Context, endpoint string, rp reply) {
	attrs, ok := r.accepted[endpoint]
	if rp.status != http.StatusOK || rp.outcome != outcomeAccepted || !ok {
		attrs = requestAttrs(endpoint, rp.outcome, rp.status)
	}
	r.tel.SandboxauditReceiverRequests.Add(ctx, 1, attrs)
}

func requestAttrs(endpoint, outcome string, status int) metric.AddOption {
	return metric.WithAttributeSet(attribute.NewSet(
		attribute.String("endpoint", endpoint),
		attribute.String("outcome", outcome),
		attribute.Int("http.response.status_code", status),
	))
}

// mediaType returns the media type of the request without parameters
// (charset and the like), lowercased; "" when absent or unparsable. A bare
// type we accept, what clients send nearly always, is recognized without
// mime.ParseMediaType, which allocates a map of parameters per call.
func mediaType(req *http.Request) string {
	ct := req.Header.Get("Content-Type")
	for _, known := range [...]string{contentTypeJSON, contentTypeNDJSON, contentTypeProtobuf} {
		if strings.EqualFold(ct, known) {
			return known
		}
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	// JSON is UTF-8 (RFC 8259): a body labelled with another charset would
	// be read as text it is not, so it is refused (415) instead.
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return ""
	}
	return mt
}

// requestBody is a request body: b is all of it, contiguous. held is the
// budget it reserved, given back by done once the request is answered
// (decoded data lives until then, so the reservation covers it too). The
// caller owns it, on its stack: a request body of one chunk (any single
// event) then costs no allocation besides the pooled chunk.
type requestBody struct {
	b      []byte
	first  *[]byte   // pooled; b aliases it when it is the only chunk
	more   []*[]byte // pooled chunks after the first; b is then a copy of them all
	held   int64     // reserved now
	chunks int64     // reserved for the body's chunks, the floor of held
	r      *sandboxReceiver
}

// recycle returns the chunks to the pool; b must no longer be referenced.
// The reservation stays until done.
func (rb *requestBody) recycle() {
	if rb.first != nil {
		rb.r.chunks.put(rb.first)
	}
	for _, c := range rb.more {
		rb.r.chunks.put(c)
	}
	rb.first, rb.more, rb.b = nil, nil, nil
}

// done gives the reservation back.
func (rb *requestBody) done() {
	rb.r.budget.release(rb.held)
	rb.held, rb.chunks = 0, 0
}

// settle makes the reservation need, the bytes of the canonical lines a
// request's events decode to (what the pipeline's copies are made of, up
// to six times the body when the events are full of escapes), and never
// less than what its body's chunks took: a bound taken before decoding
// (escapeBound) is given back down to the exact size once decoded. A
// request that needs more than the whole budget takes all of it, so it runs
// alone. errOverBudget when the budget cannot cover it now.
func (rb *requestBody) settle(need int64) error {
	need = min(max(need, rb.chunks), rb.r.budget.limit)
	switch {
	case need < rb.held:
		rb.r.budget.release(rb.held - need)
	case need > rb.held:
		if !rb.r.budget.reserve(need - rb.held) {
			return errOverBudget
		}
	}
	rb.held = need
	return nil
}

// escapeBound bounds the bytes of the canonical lines a body's JSON
// decodes to, as far as escapes and numbers go: DEL becomes \u007f (five
// more bytes), a UTF-8 sequence of n bytes at most 6 or 12 (two more per
// byte; the decoder refuses invalid UTF-8), and a number with an exponent
// at most 14 more (exponentBound). Everything else a line holds is at most
// as long as in the body, bar the fields the reference fills in, which
// settle counts once decoded.
func escapeBound(b []byte) int64 {
	return utf8Bound(b) + exponentBound(b)
}

// exponentGrowth is the most a number written with an exponent grows by in
// its canonical spelling: 1e15 becomes 1000000000000000.0 (4 bytes to 18);
// from 1e16 on the exponent is kept. Six bodies of 1e15s, within the budget
// by their bytes, were all decoded before one was refused (1.39 GB).
const exponentGrowth = 14

// exponentBound counts the e and E that follow a digit or a point, as a
// number's exponent does (and hex ids at times: a bound, not a count).
func exponentBound(b []byte) int64 {
	n := int64(0)
	for _, c := range []byte{'e', 'E'} {
		for i := 1; i < len(b); i++ {
			j := bytes.IndexByte(b[i:], c)
			if j < 0 {
				break
			}
			i += j
			if d := b[i-1]; d >= '0' && d <= '9' || d == '.' {
				n++
			}
		}
	}
	return n * exponentGrowth
}

// utf8Bound is escapeBound's part for DEL and UTF-8 sequences.
func utf8Bound(b []byte) int64 {
	const highs = 0x8080808080808080
	const del = 0x7f7f7f7f7f7f7f7f
	high, dels := 0, 0
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// Bytes with the high bit set, and (over-counting at worst) bytes
		// equal to 0x7F: the zero bytes of w^del.
		x := w ^ del
		high += bits.OnesCount64(w & highs)
		dels += bits.OnesCount64((x - 0x0101010101010101) &^ x & highs &^ w)
	}
	for ; i < len(b); i++ {
		switch {
		case b[i] == 0x7f:
			dels++
		case b[i] >= 0x80:
			high++
		}
	}
	return int64(len(b) + 2*high + 5*dels)
}

// fail recycles and releases after an error.
func (rb *requestBody) fail(err error) error {
	rb.recycle()
	rb.done()
	return err
}

// chunk returns a pooled chunk: the first unreserved (see firstChunk), the
// others reserved first; errOverBudget past the budget.
func (rb *requestBody) chunk() (*[]byte, error) {
	if rb.first == nil {
		rb.first = rb.r.chunks.get(0)
		return rb.first, nil
	}
	n := 1 + len(rb.more)
	if err := rb.hold(int64(chunkSize(n))); err != nil {
		return nil, err
	}
	c := rb.r.chunks.get(n)
	rb.more = append(rb.more, c)
	return c, nil
}

// hold reserves n more bytes for the request.
func (rb *requestBody) hold(n int64) error {
	if !rb.r.budget.reserve(n) {
		return errOverBudget
	}
	rb.held += n
	rb.chunks += n
	return nil
}

// readBody reads the whole request body into rb. Each chunk after the
// first is reserved from max_inflight_bytes before data is read into it,
// the first once it is filled; past the budget it stops with errOverBudget
// (a 503 asking the client to retry). On success the caller must call
// rb.done, and may recycle as soon as nothing refers to the body's bytes;
// on error rb holds nothing.
func (r *sandboxReceiver) readBody(req *http.Request, rb *requestBody) error {
	defer func() { _ = req.Body.Close() }() // read or refused: nothing more is wanted
	*rb = requestBody{r: r}
	total := 0
	for {
		c, err := rb.chunk()
		if err != nil {
			return rb.fail(err)
		}
		n, err := fill(req.Body, (*c)[:cap(*c)])
		*c = (*c)[:n]
		total += n
		if c == rb.first {
			if herr := rb.hold(firstChunk); herr != nil {
				return rb.fail(herr)
			}
		}
		if errors.Is(err, io.EOF) { // the end; io.ErrUnexpectedEOF (cut short) is another error
			break
		}
		if err != nil {
			return rb.fail(err)
		}
		if int64(total) > r.maxBodySize() {
			// confighttp's limit reader errs first; this is the backstop.
			return rb.fail(&http.MaxBytesError{Limit: r.maxBodySize()})
		}
	}
	if len(rb.more) == 0 {
		rb.b = *rb.first
		return nil
	}
	// The copy takes the chunks' place in the reservation (which is at
	// least its size); the chunks go back to the pool at once.
	whole := make([]byte, 0, total)
	whole = append(whole, *rb.first...)
	for _, c := range rb.more {
		whole = append(whole, *c...)
	}
	rb.recycle()
	rb.b = whole
	return nil
}

// fill reads into b until b is full or r returns an error, and returns that
// error as is. Unlike io.ReadFull it does not turn an end part-way into
// io.ErrUnexpectedEOF: that error must keep meaning what the body reader
// says with it, a body cut short (fewer bytes than its Content-Length, a
// chunked or compressed stream without its end), which is refused rather
// than taken for the end of a short last chunk.
func fill(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
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
