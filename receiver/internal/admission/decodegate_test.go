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
