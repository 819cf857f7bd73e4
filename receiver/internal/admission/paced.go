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
// than the minimum rate over a sliding window: before each read the
// connection's deadline is set to the earlier of the window's and end,
// never past read_timeout. A client that stalls holds its share of the
// budget for a window, not for the whole read_timeout.
type pacedBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	rate *rateWindow
	end  time.Time // zero: none
}

func (b *pacedBody) Read(p []byte) (int, error) {
	d := b.rate.deadline()
	if !b.end.IsZero() && b.end.Before(d) {
		d = b.end
	}
	_ = b.rc.SetReadDeadline(d) // unsupported (a test recorder): read_timeout still holds
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
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
	small := !compressed && c.small(req)
	if t := c.settings.SmallBodyTimeout; small && t > 0 && (end.IsZero() || now.Add(t).Before(end)) {
		// One deadline, set once, for all its reads. A body within the
		// first buffer holds no budget while it stalls (see FirstBuffer),
		// but it holds a connection, which is never taken from a request
		// in flight: the deadline frees it too.
		_ = http.NewResponseController(w).SetReadDeadline(now.Add(t))
		return req
	}
	// A body held in the first buffer, reserved only once filled or ended,
	// holds no budget while it stalls (the usual single event): it is not
	// paced. Nor is a small body: read_timeout alone, as the server applies it.
	held := !compressed && req.ContentLength >= 0 && req.ContentLength <= FirstBuffer
	if small || held || c.settings.MinBodyRate <= 0 {
		c.answerInTime(w, end)
		return req
	}
	req.Body = &pacedBody{ReadCloser: req.Body, rc: http.NewResponseController(w), rate: newRateWindow(now, c.settings.MinBodyRate, grace), end: end}
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
