package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"io"
	"net/http"
	"time"
)

// DefaultBodyGrace is how long a body may take before the minimum rate
// applies: a round trip or two and a slow start, on any network.
const DefaultBodyGrace = 5 * time.Second

// pacedBody cuts a request body that stops arriving, or arrives slower
// than the minimum rate, past a grace period: before each read the
// connection's deadline is set to the earlier of the last bytes' arrival
// plus the grace and the start plus the grace plus the bytes received at
// the rate, never past read_timeout. A client that sends a little and
// stalls holds its share of the budget for the grace period, not for the
// whole read_timeout.
type pacedBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	start time.Time
	last  time.Time // when bytes last arrived
	end   time.Time // read_timeout's end; zero: none
	grace time.Duration
	rate  int64 // bytes per second
	n     int64
}

func (b *pacedBody) Read(p []byte) (int, error) {
	d := b.last
	if paced := b.start.Add(time.Duration(float64(b.n) / float64(b.rate) * float64(time.Second))); paced.Before(d) {
		d = paced
	}
	d = d.Add(b.grace)
	if !b.end.IsZero() && d.After(b.end) {
		d = b.end
	}
	_ = b.rc.SetReadDeadline(d) // unsupported (a test recorder): read_timeout still holds
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.n += int64(n)
		b.last = time.Now()
	}
	return n, err
}

// Pace returns req with its body paced by the minimum rate (0: not
// paced), grace being the time a body may take before the rate applies.
func (c *Controller) Pace(w http.ResponseWriter, req *http.Request, grace time.Duration) *http.Request {
	rate := c.settings.MinBodyRate
	if rate <= 0 || req.Body == http.NoBody {
		return req
	}
	if req.ContentLength >= 0 && req.ContentLength <= FirstBuffer {
		// Held in the first buffer, which is reserved only once filled or
		// ended: stalling, it holds no budget. (The usual single event.)
		return req
	}
	now := time.Now()
	b := &pacedBody{ReadCloser: req.Body, rc: http.NewResponseController(w), start: now, last: now, grace: grace, rate: rate}
	if t := c.settings.ReadTimeout; t > 0 {
		b.end = now.Add(t)
	}
	req.Body = b
	return req
}
