package trail

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSortBySessionThenKey sorts records as a run holds them (sessions
// interleaved, seqs nearly in order, some far out of order, repeated keys)
// and checks the order against one comparison sort of them all.
func TestSortBySessionThenKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var sc sortScratch
	// far: one record in far is far out of order (none when 0), which
	// takes the sort past what insertion is allowed.
	for _, c := range []struct{ records, sessions, far int }{
		{100, 3, 10}, {5000, 7, 10}, {5000, 5000, 10}, {20000, 100, 10}, {3000, 1, 10},
		{20000, 100, 0}, {3000, 1, 0}, {20000, 3, 500},
	} {
		var arena []byte
		var spans []span
		for i := range c.records {
			var r [keyLen]byte
			s := uint64(rng.IntN(c.sessions))
			binary.BigEndian.PutUint64(r[0:], s*0x9e3779b97f4a7c15)
			binary.BigEndian.PutUint64(r[8:], s)
			seq := int64(i / c.sessions)
			if i%3 == 2 {
				seq -= 2 // a finish after the next start
			}
			if c.far > 0 && rng.IntN(c.far) == 0 {
				seq = rng.Int64N(int64(c.records)) - 10
			}
			binary.BigEndian.PutUint64(r[16:], sortable(seq))
			r[32] = byte(rng.IntN(2))
			binary.BigEndian.PutUint64(r[41:], uint64(rng.IntN(4)))
			off := len(arena)
			arena = append(arena, r[:]...)
			spans = append(spans, span{k0: binary.BigEndian.Uint64(r[0:]), k1: binary.BigEndian.Uint64(r[8:]),
				k2: binary.BigEndian.Uint64(r[16:]), off: uint32(off), end: uint32(len(arena))})
		}
		want := slices.Clone(spans)
		slices.SortFunc(want, func(x, y span) int { return x.cmp(y, arena) })
		got := sc.sort(slices.Clone(spans), arena)
		require.Len(t, got, len(want))
		for i := range want {
			require.Equal(t, 0, got[i].cmp(want[i], arena), "%+v: record %d", c, i)
		}
	}
}
