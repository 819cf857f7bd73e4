package admission

import "testing"

// TestBuffersDoubleAndReturnToTheirPool: a body's buffers are 4, 8, 16 and
// then 32 KiB, and a buffer put back is handed out again only for a buffer of
// its own size (the budget reserves the size before reading into it, so a
// larger buffer from the wrong pool would hold more than was reserved).
func TestBuffersDoubleAndReturnToTheirPool(t *testing.T) {
	want := []int{4 << 10, 8 << 10, 16 << 10, 32 << 10, 32 << 10, 32 << 10}
	var pools bufferPools
	for round := range 2 { // the second round gets the buffers the first put back
		var got []*[]byte
		for n, size := range want {
			c := pools.get(n)
			if cap(*c) != size || len(*c) != 0 {
				t.Fatalf("round %d: buffer %d has len %d cap %d, want 0 and %d", round, n, len(*c), cap(*c), size)
			}
			*c = append(*c, 'x')
			got = append(got, c)
		}
		for i := len(got) - 1; i >= 0; i-- {
			pools.put(got[i])
		}
	}
}
