package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLineReaderSkipsOverlongLines(t *testing.T) {
	in := "abc\n" + strings.Repeat("x", 100) + "\n\n0123456789\n" + strings.Repeat("y", 11) + "\ndef"
	lr := newLineReader(strings.NewReader(in), 10)
	type got struct {
		num     int
		text    string
		newline bool
		tooLong bool
	}
	var all []got
	for {
		ln, err := lr.next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		all = append(all, got{ln.num, string(ln.text), ln.newline, ln.tooLong})
	}
	assert.Equal(t, []got{
		{1, "abc", true, false},
		{2, "", true, true},
		{3, "", true, false},
		{4, "0123456789", true, false},
		{5, "", true, true},
		{6, "def", false, false},
	}, all)
}
