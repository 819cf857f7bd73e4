package plural

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCount(t *testing.T) {
	require.Equal(t, "0 lines", Count(0, "line"))
	require.Equal(t, "1 line", Count(int64(1), "line"))
	require.Equal(t, "2 closed segments", Count(uint64(2), "closed segment"))
	require.Equal(t, "is", Pick(1, "is", "are"))
	require.Equal(t, "are", Pick(3, "is", "are"))
	require.Equal(t, "first line", First(int64(1), "line"))
	require.Equal(t, "first 2 lines", First(2, "line"))
	require.Equal(t, "line 5", Lines(int64(5), 5))
	require.Equal(t, "lines 5-9", Lines(5, 9))
}
