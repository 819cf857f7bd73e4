package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"io"
	"net/http"
	"time"
)

// DefaultBodyGrace is the window over which the minimum rate is measured:
// a round trip or two and a slow start, on any network.
const DefaultBodyGrace = 5 * time.Second

// pacedBody cuts a request body that stops arriving, or arrives slower
// than the minimum rate over a sliding window, or (a small body) takes
// longer than its timeout: before each read the connection's deadline is
// set to the earliest of these, never past read_timeout. A client that
// stalls holds its share of the budget for a window, not for the whole
// read_timeout.
type pacedBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	rate *rateWindow // nil: only end applies
	end  time.Time   // zero: none
}

func (b *pacedBody) Read(p []byte) (int, error) {
	d := b.end
	if b.rate != nil {
		if w := b.rate.deadline(); d.IsZero() || w.Before(d) {
			d = w
		}
	}
	_ = b.rc.SetReadDeadline(d) // unsupported (a test recorder): read_timeout still holds
	n, err := b.ReadCloser.Read(p)
	if n > 0 && b.rate != nil {
		b.rate.add(time.Now(), n)
	}
	return n, err
}

// Pace returns req with its body paced: a small body must arrive within
// the small-body timeout, a larger one at the minimum rate over every
// window of grace (0 rate: not paced). None goes past read_timeout, nor
// past AnswerBy.
func (c *Controller) Pace(w http.ResponseWriter, req *http.Request, grace time.Duration) *http.Request {
	if req.Body == http.NoBody {
		return req
	}
	now := time.Now()
	end := c.bodyEnd(now)
	compressed := compressed(req)
	if !compressed && req.ContentLength >= 0 && req.ContentLength <= FirstBuffer {
		// Held in the first buffer, which is reserved only once filled or
		// ended: stalling, it holds no budget. (The usual single event.) It
		// holds a connection, which is never taken from a request in
		// flight: one deadline, set once, frees it at the small-body
		// timeout.
		if t := c.settings.SmallBodyTimeout; t > 0 && c.small(req) && (end.IsZero() || now.Add(t).Before(end)) {
			_ = http.NewResponseController(w).SetReadDeadline(now.Add(t))
			return req
		}
		c.answerInTime(w, end)
		return req
	}
	b := &pacedBody{ReadCloser: req.Body, rc: http.NewResponseController(w), end: end}
	switch t := c.settings.SmallBodyTimeout; {
	case !compressed && c.small(req) && t > 0:
		if b.end.IsZero() || now.Add(t).Before(b.end) {
			b.end = now.Add(t)
		}
	case (compressed || !c.small(req)) && c.settings.MinBodyRate > 0:
		b.rate = newRateWindow(now, c.settings.MinBodyRate, grace)
	default: // read_timeout alone, as the server applies it
		c.answerInTime(w, end)
		return req
	}
	req.Body = b
	return req
}

// compressed tells whether req's body is compressed. Such a body is paced
// by its rate whatever its length: once inflated past its first buffer it
// holds budget, and a large body's (the class a decompressed body reads
// in), before it ends.
func compressed(req *http.Request) bool {
	ce := req.Header.Get("Content-Encoding")
	return ce != "" && ce != "identity"
}

// bodyEnd is when a body that began arriving at now must have arrived:
// the earlier of read_timeout and AnswerBy; zero if neither is set.
func (c *Controller) bodyEnd(now time.Time) time.Time {
	d := c.settings.ReadTimeout
	if c.answerFirst() {
		d = c.settings.AnswerBy
	}
	if d <= 0 {
		return time.Time{}
	}
	return now.Add(d)
}

// answerFirst tells whether AnswerBy comes before read_timeout.
func (c *Controller) answerFirst() bool {
	a := c.settings.AnswerBy
	return a > 0 && (c.settings.ReadTimeout <= 0 || a < c.settings.ReadTimeout)
}

// answerInTime moves the read deadline of a body read without pacing to
// end when AnswerBy comes before read_timeout: past the server's write
// deadline its 408 could not be written.
func (c *Controller) answerInTime(w http.ResponseWriter, end time.Time) {
	if c.answerFirst() {
		_ = http.NewResponseController(w).SetReadDeadline(end)
	}
}
