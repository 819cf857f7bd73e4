package sandboxauditreceiver

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDedupeWindowEvictsOldestFirst(t *testing.T) {
	d := newDedupeWindow(3)
	id := func(n int) uuid.UUID { return sessionEventID(testSession, n, "start") }
	// seen reserves ids and gives them back at once, reporting which were
	// committed before.
	seen := func(ids ...uuid.UUID) []bool {
		dup := make([]bool, len(ids))
		require.True(t, d.reserve(ids, dup))
		d.release(ids)
		return dup
	}

	d.commit([]uuid.UUID{id(1), id(2)})
	assert.Equal(t, []bool{true, true, false}, seen(id(1), id(2), id(3)))

	// Committing an id twice takes one slot.
	d.commit([]uuid.UUID{id(2), id(3)})
	assert.Equal(t, 3, d.len())
	assert.Equal(t, []bool{true, true, true}, seen(id(1), id(2), id(3)))

	// The window is full: each new id pushes out the oldest.
	d.commit([]uuid.UUID{id(4)})
	assert.Equal(t, []bool{false, true, true, true}, seen(id(1), id(2), id(3), id(4)))
	d.commit([]uuid.UUID{id(5), id(6)})
	assert.Equal(t, []bool{false, false, false, true, true, true}, seen(id(1), id(2), id(3), id(4), id(5), id(6)))
	assert.Equal(t, 3, d.len())

	// Wrapping around more than once keeps ring and map in step.
	for n := 7; n < 20; n++ {
		d.commit([]uuid.UUID{id(n)})
	}
	assert.Equal(t, 3, d.len())
	assert.Equal(t, []bool{false, true, true, true}, seen(id(16), id(17), id(18), id(19)))
}

func TestDedupeWindowReservations(t *testing.T) {
	d := newDedupeWindow(10)
	id := func(n int) uuid.UUID { return sessionEventID(testSession, n, "start") }
	d.commit([]uuid.UUID{id(1)})

	// A reserves 2 and 3 (1 is a duplicate).
	dupA := make([]bool, 3)
	require.True(t, d.reserve([]uuid.UUID{id(1), id(2), id(3)}, dupA))
	assert.Equal(t, []bool{true, false, false}, dupA)

	// B wants 4 and 3: 3 is A's, so B gets nothing, not even 4.
	dupB := make([]bool, 2)
	assert.False(t, d.reserve([]uuid.UUID{id(4), id(3)}, dupB))
	assert.Equal(t, []bool{false, false}, dupB)
	dupC := make([]bool, 1)
	require.True(t, d.reserve([]uuid.UUID{id(4)}, dupC), "4 was left free")
	d.release([]uuid.UUID{id(4)})

	// A fails: its ids are free again and not remembered.
	d.release([]uuid.UUID{id(2), id(3)})
	require.True(t, d.reserve([]uuid.UUID{id(4), id(3)}, dupB))
	assert.Equal(t, []bool{false, false}, dupB)

	// B delivers: its ids are duplicates from now on, and release after
	// commit changes nothing.
	d.commit([]uuid.UUID{id(4), id(3)})
	d.release([]uuid.UUID{id(4), id(3)})
	dup := make([]bool, 3)
	require.True(t, d.reserve([]uuid.UUID{id(2), id(3), id(4)}, dup))
	assert.Equal(t, []bool{false, true, true}, dup)
	assert.Equal(t, 3, d.len())
}
