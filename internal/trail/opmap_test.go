package trail

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestOpMapSameHash keeps operations apart whose span ids hash alike: each
// keeps its own value through put, get and del, whichever came first.
func TestOpMapSameHash(t *testing.T) {
	m := newOpMap[int]()
	s := [16]byte{1}
	const h = 42
	m.put(s, "a", h, 1)
	m.put(s, "b", h, 2)
	m.put(s, "c", 7, 3)
	for _, c := range []struct {
		id   string
		hash uint64
		want int
	}{{"a", h, 1}, {"b", h, 2}, {"c", 7, 3}} {
		v, ok := m.get(s, c.id, c.hash)
		assert.True(t, ok, c.id)
		assert.Equal(t, c.want, v, c.id)
	}
	_, ok := m.get([16]byte{2}, "a", h)
	assert.False(t, ok, "another session")
	m.del(s, "a", h)
	_, ok = m.get(s, "a", h)
	assert.False(t, ok)
	v, ok := m.get(s, "b", h)
	assert.True(t, ok)
	assert.Equal(t, 2, v, "b outlives a, whose hash it shared")
	m.put(s, "b", h, 5) // b is in the second map: updated there, not added twice
	n := 0
	m.each(func(_ [16]byte, id string, v int) {
		n++
		if id == "b" {
			assert.Equal(t, 5, v)
		}
	})
	assert.Equal(t, 2, n, "b and c")
	m.del(s, "b", h)
	_, ok = m.get(s, "b", h)
	assert.False(t, ok)
}
