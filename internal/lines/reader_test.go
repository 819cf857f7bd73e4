package lines

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type got struct {
	num     int
	text    string
	raw     string
	newline bool
	tooLong bool
	size    int64
}

func readAll(t *testing.T, lr *Reader) []got {
	t.Helper()
	var all []got
	for range 1000 {
		ln, err := lr.Next()
		if err == io.EOF {
			return all
		}
		require.NoError(t, err)
		all = append(all, got{ln.Num, string(ln.Text), string(ln.Bytes()), ln.Newline, ln.TooLong, ln.Size})
	}
	t.Fatal("no EOF after 1000 lines")
	return nil
}

func TestReaderSkipsOverlongLines(t *testing.T) {
	in := "abc\n" + strings.Repeat("x", 100) + "\n\n0123456789\n" + strings.Repeat("y", 11) + "\ndef"
	// A 16-byte buffer (bufio's minimum) makes the long lines span reads.
	for _, bufSize := range []int{16, 0} {
		all := readAll(t, NewReader(strings.NewReader(in), bufSize, 10))
		assert.Equal(t, []got{
			{1, "abc", "abc\n", true, false, 4},
			{2, "", "", true, true, 101},
			{3, "", "\n", true, false, 1},
			{4, "0123456789", "0123456789\n", true, false, 11},
			{5, "", "", true, true, 12},
			{6, "def", "def", false, false, 3},
		}, all, "buffer %d", bufSize)
	}
}

func TestReaderAssemblesLinesLongerThanItsBuffer(t *testing.T) {
	long := strings.Repeat("z", 100)
	in := long + "\nshort\n" + long
	all := readAll(t, NewReader(strings.NewReader(in), 16, 0))
	assert.Equal(t, []got{
		{1, long, long + "\n", true, false, 101},
		{2, "short", "short\n", true, false, 6},
		{3, long, long, false, false, 100},
	}, all)
}

func TestReaderEmptyInput(t *testing.T) {
	assert.Empty(t, readAll(t, NewReader(strings.NewReader(""), 0, 10)))
}

func TestReaderPassesOnReadErrors(t *testing.T) {
	boom := errors.New("boom")
	lr := NewReader(io.MultiReader(strings.NewReader("ok\npart"), iotest.ErrReader(boom)), 0, 0)
	ln, err := lr.Next()
	require.NoError(t, err)
	assert.Equal(t, "ok", string(ln.Text))
	_, err = lr.Next()
	require.ErrorIs(t, err, boom)
}

// TestReaderResetStartsTheNextStreamClean: a reader left mid-way through a
// long line of one stream reads the next stream from its first line, with
// nothing of the first carried over.
func TestReaderResetStartsTheNextStreamClean(t *testing.T) {
	lr := NewReader(strings.NewReader("first\n"+strings.Repeat("q", 100)+"\nrest\n"), 16, 0)
	ln, err := lr.Next()
	require.NoError(t, err)
	require.Equal(t, "first", string(ln.Text))
	ln, err = lr.Next()
	require.NoError(t, err)
	require.Len(t, ln.Text, 100) // assembled past the 16-byte buffer
	lr.Reset(iotest.HalfReader(strings.NewReader(strings.Repeat("w", 40) + "\nend")))
	assert.Equal(t, []got{
		{1, strings.Repeat("w", 40), strings.Repeat("w", 40) + "\n", true, false, 41},
		{2, "end", "end", false, false, 3},
	}, readAll(t, lr))
}

// TestReaderTakesTheLargestBound: a bound of math.MaxInt wrapped when the
// newline was added to it, and every line read as too long (the spool, given
// max_line_bytes: 9223372036854775807, quarantined each line it held).
func TestReaderTakesTheLargestBound(t *testing.T) {
	long := strings.Repeat("z", 100)
	for _, bufSize := range []int{16, 0} {
		all := readAll(t, NewReader(strings.NewReader("abc\n"+long+"\n"), bufSize, math.MaxInt))
		assert.Equal(t, []got{
			{1, "abc", "abc\n", true, false, 4},
			{2, long, long + "\n", true, false, 101},
		}, all, "buffer %d", bufSize)
	}
}
