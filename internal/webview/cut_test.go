package webview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/trail"
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

// The beginning of a long trace id a session keeps shows as the whole id
// does, and is not linked.
func TestShownTrace(t *testing.T) {
	tt := &traceTemplate{tmpl: "http://127.0.0.1:16686/trace/{trace_id}"}
	for _, id := range []string{
		strings.Repeat("t", 5000),
		strings.Repeat("é", 3000),
		strings.Repeat("\u202e\x1b", 2000),
		strings.Repeat("\xff", 2000),
		strings.Repeat("❤️", 1500),
	} {
		var s trail.Session
		s.AddOp(&trail.Op{TraceID: id, Start: &trail.Event{}})
		require.NotNil(t, s.LongTrace)
		assert.Less(t, len(s.TraceID), 8*maxFieldChars)
		assert.Equal(t, shownField(id), shownTrace(s))
		assert.Empty(t, tt.sessionLink(&s))
	}
	s := trail.Session{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"}
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", shownTrace(s))
	assert.Equal(t, "http://127.0.0.1:16686/trace/4bf92f3577b34da6a3ce929d0e0e4736", tt.sessionLink(&s))
}

// indentedJSON indents as json.Indent does, and cuts as cutJSONText cuts
// the whole indented text, counting its length without building it.
func TestIndentedJSONIsJSONIndentCut(t *testing.T) {
	for _, src := range []string{
		`{}`, `[]`, `{"a":[]}`, `{ "a" : [ ] , "b" : { } }`, `[1,2,[3,[4,{"x":null}]]]`,
		`{"s":"a,b:[c]{d}\"e\\","t":"\u202e\\\"","u":true,"v":-1.5e+10}`,
		"\n\t{\"a\":\r\n[1 , 2]}", `"just a string"`, `12`, `{"é":"❤️"}`,
		`{"a":` + strings.Repeat("[", 50) + strings.Repeat("1,", 40) + "1" + strings.Repeat("]", 50) + `}`,
	} {
		var want bytes.Buffer
		require.NoError(t, json.Indent(&want, []byte(src), "", "  "), src)
		for _, n := range []int{0, 1, 5, 17, 60, 200, 1000, want.Len(), want.Len() + 1, 1 << 20} {
			assert.Equal(t, cutJSONText(want.Bytes(), n), indentedJSON([]byte(src), n), "%s at %d", src, n)
		}
	}
}
