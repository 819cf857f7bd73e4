package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"io"
	"net/http"
	"time"
)

// defaultBodyGrace is how long a body may take before min_body_rate
// applies: a round trip or two and a slow start, on any network.
const defaultBodyGrace = 5 * time.Second

// pacedBody cuts a request body that stops arriving, or arrives slower
// than min_body_rate, past a grace period: before each read the
// connection's deadline is set to the earlier of the last bytes' arrival
// plus the grace and the start plus the grace plus the bytes received at
// min_body_rate, never past read_timeout. A client that sends a little
// and stalls held its share of max_inflight_bytes for the whole
// read_timeout (30 s), and a few hundred such connections locked larger
// requests out with 503s; now it holds it for the grace period.
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

// paced returns req with its body paced by min_body_rate (0: not paced).
func (r *sandboxReceiver) paced(w http.ResponseWriter, req *http.Request) *http.Request {
	rate := r.cfg.MinBodyRate
	if rate <= 0 || req.Body == http.NoBody {
		return req
	}
	if req.ContentLength >= 0 && req.ContentLength <= firstChunk {
		// Held in the first chunk, which is reserved only once filled or
		// ended: stalling, it holds no budget. (The usual single event.)
		return req
	}
	now := time.Now()
	b := &pacedBody{ReadCloser: req.Body, rc: http.NewResponseController(w), start: now, last: now, grace: r.bodyGrace, rate: rate}
	if t := r.cfg.ServerConfig.ReadTimeout; t > 0 {
		b.end = now.Add(t)
	}
	req.Body = b
	return req
}
