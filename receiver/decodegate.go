package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"context"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// largeDecodeBytes is the body (or, in a large ndjson batch, line) size
// from which decoding waits its turn at the decode gate.
const largeDecodeBytes = 1 << 20

// decodeGate lets one large body decode at a time. Until its events are
// decoded, a body is counted by its bytes and escapes, but a decoded
// event costs more while it is built: an object of 1.6 M unsorted keys
// took 15 times its 19 MiB body, and six such bodies decoding at once,
// each within the budget, took the collector to 1.63 GB. Once decoded, the
// exact count of its lines can refuse it, and the next one goes.
type decodeGate chan struct{}

func newDecodeGate() decodeGate { return make(decodeGate, 1) }

// enter waits for the gate when size is large, and returns its release;
// errOverBudget if ctx ends first (the client left, or the server stops).
func (g decodeGate) enter(ctx context.Context, size int) (leave func(), err error) {
	if size < largeDecodeBytes {
		return func() {}, nil
	}
	select {
	case g <- struct{}{}:
		return func() { <-g }, nil
	case <-ctx.Done():
		return nil, errOverBudget
	}
}

// decodeInto decodes one line of a large ndjson batch, through the gate
// when the line is large: such a batch is decoded a line at a time, and one
// line may be almost the whole body.
func (g decodeGate) decodeInto(ctx context.Context, opts auditevent.DecodeOptions, text []byte, e *auditevent.Event) error {
	leave, err := g.enter(ctx, len(text))
	if err != nil {
		return err
	}
	defer leave()
	return opts.DecodeInto(text, e)
}
