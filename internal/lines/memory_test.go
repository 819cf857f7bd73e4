package lines

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// allocated is the bytes the heap handed out while read ran: an upper
// bound on what the reader held at its peak.
func allocated(read func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// longLines is a line of n 'x', a newline, and "ok\n".
func longLines(n int) io.Reader {
	return io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("x"), n)), bytes.NewReader([]byte("\nok\n")))
}

// TestReaderHoldsAnOverlongLineOnlyUpToItsBound: a line past the bound is
// held up to the bound and then dropped, not grown by doubling and
// copying (which handed out several times the bound: a spool's 300 MB
// garbage line took near 940 MB under its 256 MiB bound).
func TestReaderHoldsAnOverlongLineOnlyUpToItsBound(t *testing.T) {
	const bound, buf = 8 << 20, 64 << 10
	var ln, next Line
	in := longLines(3 * bound / 2)
	got := allocated(func() {
		lr := NewReader(in, buf, bound)
		var err error
		ln, err = lr.Next()
		require.NoError(t, err)
		next, err = lr.Next()
		require.NoError(t, err)
	})
	require.True(t, ln.TooLong)
	require.Equal(t, int64(3*bound/2+1), ln.Size)
	require.Equal(t, "ok", string(next.Text))
	require.LessOrEqual(t, got, uint64(bound+bound/8), "bytes handed out reading a line past a bound of %d", bound)
}

// TestReaderHoldsALongLineAboutTwice: a line within the bound but longer
// than the buffer is assembled in blocks, then copied once into one slice
// of its size: about twice its size, not several times.
func TestReaderHoldsALongLineAboutTwice(t *testing.T) {
	const size, buf = 8 << 20, 64 << 10
	var ln Line
	in := longLines(size)
	got := allocated(func() {
		lr := NewReader(in, buf, size)
		var err error
		ln, err = lr.Next()
		require.NoError(t, err)
	})
	require.False(t, ln.TooLong)
	require.Len(t, ln.Text, size)
	require.Equal(t, bytes.Repeat([]byte("x"), size), ln.Text)
	require.LessOrEqual(t, got, uint64(2*size+size/4), "bytes handed out assembling a line of %d", size)
}
