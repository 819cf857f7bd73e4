package loopback

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFreeAddrsAreDistinct: FreeAddrs never hands out one port twice, even
// where the kernel would reuse a port just freed.
func TestFreeAddrsAreDistinct(t *testing.T) {
	for range 10000 {
		a, err := FreeAddrs(2)
		require.NoError(t, err)
		require.NotEqual(t, a[0], a[1])
	}
}
