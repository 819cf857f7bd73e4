package seqset

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSeqSet(t *testing.T) {
	var s Set
	seqs := []int64{0, 1, 4095, 4096, -1, -4096, -4097, 1 << 62, -1 << 63, 1<<63 - 1}
	for _, n := range seqs {
		assert.False(t, s.Add(n), "first add of %d", n)
	}
	for _, n := range seqs {
		assert.True(t, s.Add(n), "second add of %d", n)
	}
	assert.False(t, s.Add(2))
}

// TestSeqSetMatchesMap checks the ranges and the merge against a plain set
// on orders a writer produces (in order, batches out of order, files given
// backwards) and on random ones with repeats.
func TestSeqSetMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	orders := map[string][]int64{}
	var inOrder, shuffled, backwards, random []int64
	for i := range int64(20_000) {
		inOrder = append(inOrder, i+1)
		backwards = append(backwards, 20_000-i)
		random = append(random, rng.Int64N(15_000)-5_000)
	}
	shuffled = slices.Clone(inOrder)
	for lo := 0; lo < len(shuffled); lo += 100 { // batches written out of order
		rng.Shuffle(100, func(i, j int) { shuffled[lo+i], shuffled[lo+j] = shuffled[lo+j], shuffled[lo+i] })
	}
	orders["in order"], orders["shuffled batches"], orders["backwards"], orders["random"] = inOrder, shuffled, backwards, random
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			var s Set
			seen := map[int64]bool{}
			for i, n := range append(order, order[:500]...) {
				require.Equal(t, seen[n], s.Add(n), "add #%d of %d", i, n)
				seen[n] = true
			}
			for i := range len(s.ranges) - 1 {
				// Sorted, disjoint, and merged where they touch.
				require.Less(t, s.ranges[i].hi+1, s.ranges[i+1].lo)
			}
			if name != "random" {
				// What keeps verify flat: a writer's order folds into a
				// few ranges (gaps within one batch at most) plus at most
				// looseSlack waiting seqs, whatever the count.
				assert.LessOrEqual(t, len(s.ranges), 100)
				assert.LessOrEqual(t, len(s.loose), looseSlack+101)
			}
		})
	}
}

func TestGaps(t *testing.T) {
	cases := []struct {
		name    string
		seqs    []int64
		missing int64
		first   []Range
	}{
		{"none", nil, 0, nil},
		{"contiguous", []int64{1, 2, 3}, 0, nil},
		{"from zero", []int64{0, 1, 2}, 0, nil},
		{"leading", []int64{4, 5}, 3, []Range{{1, 3}}},
		{"inner, out of order", []int64{9, 1, 2, 3, 7}, 4, []Range{{4, 6}, {8, 8}}},
		{"capped", []int64{1, 3, 5, 7, 9, 11}, 5, []Range{{2, 2}, {4, 4}}},
		{"saturates", []int64{-1 << 63, 1<<63 - 1}, 1<<63 - 1, []Range{{-1<<63 + 1, 1<<63 - 2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s Set
			for _, n := range c.seqs {
				s.Add(n)
			}
			missing, first := s.Gaps(2)
			assert.Equal(t, c.missing, missing)
			assert.Equal(t, c.first, first)
		})
	}
}

// TestGapsEveryOther counts the holes of a long session missing every
// other seq exactly, while keeping only the ranges asked for.
func TestGapsEveryOther(t *testing.T) {
	var s Set
	for n := int64(1); n <= 200_000; n += 2 {
		s.Add(n)
	}
	missing, first := s.Gaps(3)
	assert.Equal(t, int64(99_999), missing)
	assert.Equal(t, []Range{{2, 2}, {4, 4}, {6, 6}}, first)
}

func TestLowestAndLen(t *testing.T) {
	var s Set
	_, ok := s.Lowest()
	assert.False(t, ok, "empty")
	for _, n := range []int64{9, 7, 8} { // 7 and 8 wait as loose seqs
		s.Add(n)
	}
	low, ok := s.Lowest()
	assert.True(t, ok)
	assert.Equal(t, int64(7), low)
	assert.Equal(t, int64(1), Range{5, 5}.Len())
	assert.Equal(t, int64(3), Range{-1, 1}.Len())
	assert.Equal(t, int64(1<<63-1), Range{-1 << 63, 1<<63 - 1}.Len(), "saturates")
}
