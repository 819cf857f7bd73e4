package webview

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A cut falls between characters and never inside an escape, whose
// fragment would read as other text.
func TestCutJSONText(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{`"abc"`, 10, `"abc"`},
		{`"abcdef"`, 4, `"abc`},
		{`"ab\u202e"`, 5, `"ab`},
		{`"ab\u202e"`, 8, `"ab`},
		{`"ab\u202e"`, 9, `"ab\u202e`},
		{`"ab\n"`, 4, `"ab`},
		{`"ab\\x"`, 4, `"ab`},
		{`"ab\\x"`, 5, `"ab\\`},
		{`"ab\\\"x"`, 6, `"ab\\`},
		{`"ab\\\\u202e"`, 8, `"ab\\\\u`},
		{"\"ab\u00e9\"", 4, `"ab`},
	} {
		got := cutJSONText([]byte(c.in), c.n)
		assert.Equal(t, c.want, got.Text, "%s cut at %d", c.in, c.n)
		assert.Equal(t, len(c.in), got.Len)
		assert.Equal(t, len(c.in) > c.n, got.Cut)
	}
	assert.Equal(t, `'it'"'"'s; rm -rf ~'`, shellQuoted("it's; rm -rf ~"))
}

// The beginning of a long field a session keeps shows as the whole field
// does, and is still too long to link.
func TestShownPrefix(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("t", 5000),
		strings.Repeat("é", 3000),
		strings.Repeat("\u202e\x1b", 2000),
		strings.Repeat("\xff", 2000),
		strings.Repeat("❤️", 1500),
	} {
		p := shownPrefix(s)
		assert.Less(t, len(p), 8*maxFieldChars)
		assert.Greater(t, len(p), maxFieldChars)
		assert.Equal(t, shownField(s), shownField(p))
	}
	assert.Equal(t, "short", shownPrefix("short"))
}
