package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"net"
	"net/http"
	"net/netip"
	"time"
)

// Settings are the limits a Controller applies.
type Settings struct {
	// MaxInflightBytes bounds the buffers and decoded data of the large
	// request bodies held at once.
	MaxInflightBytes int64
	// MaxBodyBytes is the largest body (max_request_body_size).
	MaxBodyBytes int64
	// MinBodyRate is the slowest a large body may arrive, in bytes per
	// second over any window (0: not paced).
	MinBodyRate int64
	// ReadTimeout is the longest a body may take (0: no limit).
	ReadTimeout time.Duration
	// AnswerBy is the longest a body may take for its answer to be written
	// before the server's write deadline (0: none).
	AnswerBy time.Duration
	// SmallBodyBytes is the largest Content-Length of a small body: small
	// bodies have a budget of their own, SmallInflightBytes, so they never
	// wait behind large ones (0: every body is large).
	SmallBodyBytes int64
	// SmallInflightBytes bounds the small bodies held at once.
	SmallInflightBytes int64
	// SmallBodyTimeout is the longest a small body may take (0: only
	// ReadTimeout).
	SmallBodyTimeout time.Duration
	// Snappy: Read inflates bodies whose Content-Encoding is still
	// EncodingSnappy (the server passes them on compressed).
	Snappy bool
}

// Controller admits request bodies: it reads them within the budget of
// their size class, shared fairly between client addresses, and paces
// them.
type Controller struct {
	settings Settings
	buffers  bufferPools
	large    *Budget
	smalls   *Budget // nil without a small-body class
}

// New returns a Controller applying s.
func New(s Settings) *Controller {
	// An address may always hold one body of the largest size: its
	// buffers and the rounding of the last.
	c := &Controller{settings: s, large: NewBudget(s.MaxInflightBytes, s.MaxBodyBytes+MaxBuffer)}
	if s.SmallBodyBytes > 0 {
		c.smalls = NewBudget(s.SmallInflightBytes, s.SmallBodyBytes+MaxBuffer)
	}
	return c
}

// small tells whether req's body is in the small class: its length is
// known and at most SmallBodyBytes.
func (c *Controller) small(req *http.Request) bool {
	return c.smalls != nil && req.ContentLength >= 0 && req.ContentLength <= c.settings.SmallBodyBytes
}

// InUse returns the bytes reserved now in both classes, and the sum of
// their high-water marks.
func (c *Controller) InUse() (used, peak int64) {
	used, peak = c.large.InUse()
	if c.smalls != nil {
		u, p := c.smalls.InUse()
		used, peak = used+u, peak+p
	}
	return used, peak
}

// Large is the budget of large bodies, Small that of small ones (nil
// without a small-body class).
func (c *Controller) Large() *Budget { return c.large }

// Small is the budget of small bodies; nil without a small-body class.
func (c *Controller) Small() *Budget { return c.smalls }

// ClientAddr is the address a request's bytes are counted to: its peer's
// IP, or for IPv6 its /64, which one host can usually fill with addresses
// of its own.
func ClientAddr(req *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(req.RemoteAddr)
	if err != nil {
		host, _, _ := net.SplitHostPort(req.RemoteAddr)
		a, _ := netip.ParseAddr(host)
		return a.Unmap()
	}
	return shareKey(ap.Addr())
}

// shareKey is the address a client's share is counted to: a itself, or
// for IPv6 its /64.
func shareKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return a
}
