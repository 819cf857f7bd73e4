package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import "time"

// Settings are the limits a Controller applies.
type Settings struct {
	// MaxInflightBytes bounds the buffers and decoded data of the request
	// bodies held at once.
	MaxInflightBytes int64
	// MaxBodyBytes is the largest body (max_request_body_size).
	MaxBodyBytes int64
	// MinBodyRate is the slowest a body may arrive, in bytes per second
	// (0: not paced).
	MinBodyRate int64
	// ReadTimeout is the longest a body may take (0: no limit).
	ReadTimeout time.Duration
}

// Controller admits request bodies: it reads them within the budget and
// paces them.
type Controller struct {
	settings Settings
	buffers  bufferPools
	budget   *Budget
}

// New returns a Controller applying s.
func New(s Settings) *Controller {
	return &Controller{settings: s, budget: NewBudget(s.MaxInflightBytes)}
}

// InUse returns the bytes reserved now and their high-water mark.
func (c *Controller) InUse() (used, peak int64) { return c.budget.InUse() }
