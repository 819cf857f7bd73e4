package idwindow

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommitEvictsOldestFirst(t *testing.T) {
	w, err := New[int](3)
	require.NoError(t, err)
	// seen reserves keys and gives them back at once, reporting which were
	// committed before.
	seen := func(keys ...int) []bool {
		dup := make([]bool, len(keys))
		require.True(t, w.Reserve(keys, dup))
		w.Release(keys...)
		return dup
	}

	w.Commit(1, 2)
	assert.Equal(t, []bool{true, true, false}, seen(1, 2, 3))

	// Committing a key twice takes one place.
	w.Commit(2, 3)
	assert.Equal(t, 3, w.Len())
	assert.Equal(t, []bool{true, true, true}, seen(1, 2, 3))

	// The window is full: each new key pushes out the oldest.
	w.Commit(4)
	assert.Equal(t, []bool{false, true, true, true}, seen(1, 2, 3, 4))
	w.Commit(5, 6)
	assert.Equal(t, []bool{false, false, false, true, true, true}, seen(1, 2, 3, 4, 5, 6))
	assert.Equal(t, 3, w.Len())

	// Going round the window more than once.
	for n := 7; n < 20; n++ {
		w.Commit(n)
	}
	assert.Equal(t, 3, w.Len())
	assert.Equal(t, []bool{false, true, true, true}, seen(16, 17, 18, 19))
}

func TestReservations(t *testing.T) {
	w, err := New[int](10)
	require.NoError(t, err)
	w.Commit(1)

	// A reserves 2 and 3 (1 is a duplicate).
	dupA := make([]bool, 3)
	require.True(t, w.Reserve([]int{1, 2, 3}, dupA))
	assert.Equal(t, []bool{true, false, false}, dupA)

	// B wants 4 and 3: 3 is A's, so B gets nothing, not even 4.
	dupB := make([]bool, 2)
	assert.False(t, w.Reserve([]int{4, 3}, dupB))
	assert.Equal(t, []bool{false, false}, dupB)
	dupC := make([]bool, 1)
	require.True(t, w.Reserve([]int{4}, dupC), "4 was left free")
	w.Release(4)

	// A fails: its keys are free again and not remembered.
	w.Release(2, 3)
	require.True(t, w.Reserve([]int{4, 3}, dupB))
	assert.Equal(t, []bool{false, false}, dupB)

	// B is done: its keys are duplicates from now on, and release after
	// commit changes nothing.
	w.Commit(4, 3)
	w.Release(4, 3)
	dup := make([]bool, 3)
	require.True(t, w.Reserve([]int{2, 3, 4}, dup))
	assert.Equal(t, []bool{false, true, true}, dup)
	assert.Equal(t, 3, w.Len())
}

func TestReserveMarksARepeatWithinTheKeys(t *testing.T) {
	w, err := New[int](10)
	require.NoError(t, err)
	w.Commit(1)
	dup := make([]bool, 5)
	require.True(t, w.Reserve([]int{2, 1, 2, 3, 1}, dup))
	assert.Equal(t, []bool{false, true, true, false, true}, dup, "one reservation per key")
	w.Release(2, 3)
	require.True(t, w.Reserve([]int{2, 3}, dup[:2]), "both free again")
}

// A reservation lives in the table: it survives the rebuilds that adds of
// other keys make, stays out of the window meanwhile, and is still held.
func TestReservationSurvivesRebuilds(t *testing.T) {
	w, err := New[int](4) // 8 slots: a rebuild every few adds
	require.NoError(t, err)
	dup := make([]bool, 2)
	require.True(t, w.Reserve([]int{100, 101}, dup))
	for n := range 50 {
		w.Commit(n)
		require.False(t, w.Contains(100), "a reserved key is not in the window")
	}
	assert.False(t, w.Reserve([]int{7, 101}, make([]bool, 2)), "still reserved after the rebuilds")
	w.Commit(100)
	w.Release(101)
	assert.True(t, w.Contains(100))
	assert.False(t, w.Contains(101))
	require.True(t, w.Reserve([]int{100, 101}, dup))
	assert.Equal(t, []bool{true, false}, dup)
	assert.Equal(t, 4, w.Len(), "the window holds size keys; the reservation is not one of them")
}
