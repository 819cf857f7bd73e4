package admission

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A large body decodes only once the gate is free; a small one does not
// wait; a waiter whose request ends gets ErrOverBudget (a 503 to retry).
func TestDecodeGate(t *testing.T) {
	g := NewDecodeGate()
	leave, err := g.Enter(context.Background(), LargeDecodeBytes)
	require.NoError(t, err)

	small, err := g.Enter(context.Background(), LargeDecodeBytes-1)
	require.NoError(t, err, "a small body does not wait")
	small()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = g.Enter(ctx, LargeDecodeBytes)
	require.ErrorIs(t, err, ErrOverBudget)

	leave()
	again, err := g.Enter(context.Background(), LargeDecodeBytes)
	require.NoError(t, err, "free again")
	again()
}

// A free gate is taken even by a request whose context has ended: net/http
// ends it when the client half-closes its side after sending, and such a
// client still waits for its answer. Picking between the two at random
// refused half of those requests with a 503.
func TestDecodeGateFreeIsTakenWhateverTheContext(t *testing.T) {
	g := NewDecodeGate()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 100 {
		leave, err := g.Enter(ctx, LargeDecodeBytes)
		require.NoError(t, err)
		leave()
	}
}
