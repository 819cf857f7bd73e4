package admission

import (
	"net/netip"
	"testing"
	"time"
)

var (
	attacker = netip.MustParseAddr("127.0.0.3")
	victim   = netip.MustParseAddr("127.0.0.2")
	third    = netip.MustParseAddr("127.0.0.4")
)

// Alone, an address may take the whole budget; once another is refused,
// the first may not grow past half, and the other gets the room the first
// gives back.
func TestBudgetIsSharedPerAddress(t *testing.T) {
	b := NewBudget(100, 10)
	for range 10 {
		if !b.Reserve(attacker, 10) {
			t.Fatal("an address alone could not take the whole budget")
		}
	}
	if b.Reserve(victim, 10) {
		t.Fatal("reserved past the limit")
	}
	// The attacker's requests end or are cut; it tries to refill at once.
	b.Release(attacker, 60)
	if got := b.Held(attacker); got != 40 {
		t.Fatalf("attacker holds %d, want 40", got)
	}
	for b.Reserve(attacker, 10) {
	}
	if got := b.Held(attacker); got != 50 {
		t.Fatalf("with another waiting, the attacker refilled to %d, want its half (50)", got)
	}
	for range 5 {
		if !b.Reserve(victim, 10) {
			t.Fatal("the waiting address did not get the half left to it")
		}
	}
	// A third arrives: neither of the first two may grow past a third.
	if b.Reserve(third, 10) {
		t.Fatal("reserved past the limit")
	}
	b.Release(victim, 50)
	if b.Reserve(attacker, 1) {
		t.Fatal("the attacker grew past its share with three sharing")
	}
	if !b.Reserve(third, 33) || b.Reserve(third, 1) {
		t.Fatal("the third address did not get exactly its share (33)")
	}
	if used, _ := b.InUse(); used != 83 {
		t.Fatalf("used = %d, want 83", used)
	}
}

// The floor keeps one body of the largest size within any address's
// share, however many share.
func TestBudgetShareHasAFloor(t *testing.T) {
	b := NewBudget(100, 40)
	for i := range 10 { // ten addresses waiting
		b.Reserve(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), 101)
	}
	if !b.Reserve(attacker, 40) {
		t.Fatal("an address could not take the floor")
	}
	if b.Reserve(attacker, 1) {
		t.Fatal("an address grew past the floor with eleven sharing")
	}
}

// An address that gave everything back still shares the budget for a
// while (its client sends again soon); once its wait expires, it does not.
func TestBudgetForgetsIdleAddresses(t *testing.T) {
	b := NewBudget(100, 10)
	b.Reserve(attacker, 100)
	b.Reserve(victim, 1) // refused: waiting
	b.Release(attacker, 100)
	if len(b.holders) != 0 || b.idleWaiting != 2 {
		t.Fatalf("holders %v, idle waiting %d; want none and 2", b.holders, b.idleWaiting)
	}
	if !b.Reserve(third, 33) || b.Reserve(third, 1) {
		t.Fatal("with two recent addresses, a third did not get exactly its share (100/3)")
	}
	b.Release(third, 33)
	b.pruneLocked(time.Now().Add(waitingFor + time.Second))
	if len(b.waiting) != 0 || b.idleWaiting != 0 {
		t.Fatalf("waiting %v, idle waiting %d after expiry", b.waiting, b.idleWaiting)
	}
	if !b.Reserve(attacker, 100) {
		t.Fatal("alone again, an address could not take the whole budget")
	}
}
