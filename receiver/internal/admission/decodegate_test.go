package admission

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	addrA = netip.MustParseAddr("127.0.0.2")
	addrB = netip.MustParseAddr("127.0.0.3")
)

// A large body decodes only once the gate is free; a small one does not
// wait; a waiter whose request ends gets ErrOverBudget (a 503 to retry).
func TestDecodeGate(t *testing.T) {
	g := NewDecodeGate()
	leave, err := g.Enter(context.Background(), addrA, LargeDecodeBytes)
	require.NoError(t, err)

	small, err := g.Enter(context.Background(), addrA, LargeDecodeBytes-1)
	require.NoError(t, err, "a small body does not wait")
	small()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = g.Enter(ctx, addrA, LargeDecodeBytes)
	require.ErrorIs(t, err, ErrOverBudget)

	leave()
	again, err := g.Enter(context.Background(), addrA, LargeDecodeBytes)
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
		leave, err := g.Enter(ctx, addrA, LargeDecodeBytes)
		require.NoError(t, err)
		leave()
	}
}

// TestDecodeGateTakesTurnsBetweenAddresses: while one address has several
// large bodies waiting for the gate, another address's body goes next
// once it frees, not after all of them (nor at random among them): a
// client posting bodies slow to decode cannot keep another's waiting
// until its answer is due.
func TestDecodeGateTakesTurnsBetweenAddresses(t *testing.T) {
	g := NewDecodeGate()
	leave, err := g.Enter(context.Background(), addrA, LargeDecodeBytes)
	require.NoError(t, err)

	order := make(chan netip.Addr, 4)
	enter := func(addr netip.Addr) {
		l, err := g.Enter(context.Background(), addr, LargeDecodeBytes)
		if assert.NoError(t, err) {
			order <- addr
			l()
		}
	}
	for i := range 3 {
		go enter(addrA)
		waitGateWaiters(t, g, i+1)
	}
	go enter(addrB)
	waitGateWaiters(t, g, 4)
	leave()
	assert.Equal(t, addrB, <-order, "the other address goes first")
	for range 3 {
		assert.Equal(t, addrA, <-order)
	}
}

// waitGateWaiters waits, boundedly, for n bodies to wait for the gate.
func waitGateWaiters(t *testing.T, g *DecodeGate, n int) {
	t.Helper()
	waitCount(t, &g.mu, func() int { return len(g.waiters) }, n, "bodies never waited for the gate")
}
