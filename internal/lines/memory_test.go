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

// TestReaderKeepsItsFirstBlockAcrossLongLines: the block a long line is
// first assembled in is kept for the next one, not handed out with the
// line: each line past the block costs its own size and the blocks beyond
// the first, not one more block.
func TestReaderKeepsItsFirstBlockAcrossLongLines(t *testing.T) {
	const size, buf, lines = 3*blockSize - 1, 64 << 10, 8 // with its newline, three blocks
	line := append(bytes.Repeat([]byte("x"), size), '\n')
	in := bytes.NewReader(bytes.Repeat(line, lines))
	lr := NewReader(in, buf, 0)
	first, err := lr.Next() // the block is made here
	require.NoError(t, err)
	require.Len(t, first.Text, size)
	got := allocated(func() {
		for range lines - 1 {
			ln, err := lr.Next()
			require.NoError(t, err)
			require.Len(t, ln.Text, size)
		}
	})
	perLine := got / (lines - 1)
	require.LessOrEqual(t, perLine, uint64(size+(size-blockSize)+blockSize/2), "bytes handed out per line of %d", size)
}

// BenchmarkReaderLongLines reads lines three blocks long.
func BenchmarkReaderLongLines(b *testing.B) {
	line := append(bytes.Repeat([]byte("x"), 3*blockSize), '\n')
	in := bytes.NewReader(line)
	lr := NewReader(in, 64<<10, 0)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		in.Reset(line)
		lr.Reset(in)
		if _, err := lr.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
