package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"context"

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
type DecodeGate chan struct{}

// NewDecodeGate returns a free gate.
func NewDecodeGate() DecodeGate { return make(DecodeGate, 1) }

// Enter waits for the gate when size is large, and returns its release;
// ErrOverBudget if ctx ends first (the client left, or the server stops).
func (g DecodeGate) Enter(ctx context.Context, size int) (leave func(), err error) {
	if size < LargeDecodeBytes {
		return func() {}, nil
	}
	// A free gate first: a select picks at random between ready cases, and
	// net/http ends the context of a client that half-closed its side.
	select {
	case g <- struct{}{}:
		return func() { <-g }, nil
	default:
	}
	select {
	case g <- struct{}{}:
		return func() { <-g }, nil
	case <-ctx.Done():
		return nil, ErrOverBudget
	}
}

// DecodeInto decodes one line of a large ndjson batch, through the gate
// when the line is large: such a batch is decoded a line at a time, and one
// line may be almost the whole body.
func (g DecodeGate) DecodeInto(ctx context.Context, opts auditevent.DecodeOptions, text []byte, e *auditevent.Event) error {
	leave, err := g.Enter(ctx, len(text))
	if err != nil {
		return err
	}
	defer leave()
	return opts.DecodeInto(text, e)
}
