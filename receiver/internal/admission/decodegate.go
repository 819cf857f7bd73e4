package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"context"
	"net/netip"
	"slices"
	"sync"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// LargeDecodeBytes is the body (or, in a large ndjson batch, line) size
// from which decoding waits its turn at the decode gate.
const LargeDecodeBytes = 1 << 20

// DecodeGate lets one large body decode at a time. Until its events are
// decoded, a body is counted by its bytes and escapes, but a decoded event
// costs more while it is built: an object of 1.6 M unsorted keys took 15
// times its 19 MiB body. Once decoded, the exact count of its lines can
// refuse it, and the next one goes.
//
// Turns are shared between client addresses: when the gate frees, the
// oldest waiter of an address other than the one that held it goes next,
// so a client whose bodies take seconds each to decode cannot keep
// another's waiting behind all of its own until its answer is due.
type DecodeGate struct {
	mu      sync.Mutex
	busy    bool
	last    netip.Addr // the address holding the gate, or that held it last
	waiters []*gateWaiter
}

// gateWaiter is a body waiting for the gate; ready is closed when it is
// handed the gate.
type gateWaiter struct {
	addr  netip.Addr
	ready chan struct{}
}

// NewDecodeGate returns a free gate.
func NewDecodeGate() *DecodeGate { return &DecodeGate{} }

// Enter waits for the gate when size is large, and returns its release;
// ErrOverBudget if ctx ends first (the client left, or the server stops).
// addr is the client's address, whose turn it takes.
func (g *DecodeGate) Enter(ctx context.Context, addr netip.Addr, size int) (leave func(), err error) {
	if size < LargeDecodeBytes {
		return func() {}, nil
	}
	g.mu.Lock()
	if !g.busy {
		// A free gate is taken whatever the context: net/http ends the
		// context of a client that half-closed its side, and such a
		// client still waits for its answer.
		g.busy, g.last = true, addr
		g.mu.Unlock()
		return g.leave, nil
	}
	w := &gateWaiter{addr: addr, ready: make(chan struct{})}
	g.waiters = append(g.waiters, w)
	g.mu.Unlock()
	select {
	case <-w.ready:
		return g.leave, nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := slices.Index(g.waiters, w); i >= 0 {
		g.waiters = slices.Delete(g.waiters, i, i+1)
		return nil, ErrOverBudget
	}
	// Handed the gate as the context ended: it is this request's to use.
	return g.leave, nil
}

// leave hands the gate to the next waiter (see DecodeGate), or frees it.
func (g *DecodeGate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiters) == 0 {
		g.busy = false
		return
	}
	i := slices.IndexFunc(g.waiters, func(w *gateWaiter) bool { return w.addr != g.last })
	if i < 0 {
		i = 0
	}
	w := g.waiters[i]
	g.waiters = slices.Delete(g.waiters, i, i+1)
	g.last = w.addr
	close(w.ready)
}

// DecodeInto decodes one line of a large ndjson batch, through the gate
// when the line is large: such a batch is decoded a line at a time, and one
// line may be almost the whole body. addr is as for Enter.
func (g *DecodeGate) DecodeInto(ctx context.Context, addr netip.Addr, opts auditevent.DecodeOptions, text []byte, e *auditevent.Event) error {
	leave, err := g.Enter(ctx, addr, len(text))
	if err != nil {
		return err
	}
	defer leave()
	return opts.DecodeInto(text, e)
}
