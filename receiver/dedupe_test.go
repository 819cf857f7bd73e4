package sandboxauditreceiver

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
)

func TestDedupeWindowEvictsOldestFirst(t *testing.T) {
	d := newDedupeWindow(3)
	id := func(n int) uuid.UUID { return sessionEventID(testSession, n, "start") }
	seen := func(ids ...uuid.UUID) []bool {
		dup := make([]bool, len(ids))
		d.containsAny(ids, dup)
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
