package webview

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
	"github.com/sandboxaudit/sandboxaudit/internal/trail"
)

// maxShownBytes bounds the text of a line, and of its data, that an
// operation's page holds: the page is built in memory for each request,
// HTML escapes a quote fivefold, and a browser chokes on a page of
// hundreds of megabytes.
const maxShownBytes = 1 << 20

// maxFieldChars bounds a field of a page (a span or trace id, an exit
// code), as the trail bounds a command or path: the receiver takes an id
// of megabytes, which a page would repeat in every row and link. It is
// the first trace id a session keeps, so a page shows that beginning as
// it shows the whole id (shownTrace).
const maxFieldChars = trail.MaxTraceIDChars

// shownField is an untrusted field as shown (safetext.Escape), cut to
// maxFieldChars between escapes, ending in "…" when cut.
func shownField(s string) string { return safetext.EscapeCut(s, maxFieldChars) }

// shownTrace is a session's first trace id as shownField shows the whole
// id. Of a longer id the session keeps maxFieldChars characters, each
// shown as at least one, so the cut falls inside them: the character
// added after them only makes sure the cut shows.
func shownTrace(s trail.Session) string {
	if s.LongTrace == nil {
		return shownField(s.TraceID)
	}
	return shownField(s.TraceID + "…")
}

// shownJSONText is JSON text for a page: whole, or its beginning when it
// is longer than maxShownBytes.
type shownJSONText struct {
	Text string
	Len  int  // of the whole text, in bytes
	Cut  bool // Text is the beginning only
}

// cutJSONText keeps at most n bytes of the JSON text b, cut between two
// characters and outside any escape (a fragment of \u202e would read as
// other text).
func cutJSONText(b []byte, n int) shownJSONText {
	if len(b) <= n {
		return shownJSONText{Text: string(b), Len: len(b)}
	}
	i := n
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	if j := bytes.LastIndexByte(b[:i], '\\'); j >= 0 && j >= i-6 {
		run := 1
		for run <= j && b[j-run] == '\\' {
			run++
		}
		if run%2 == 1 { // b[j] begins an escape: \uXXXX or \n, \", …
			size := 2
			if j+1 < len(b) && b[j+1] == 'u' {
				size = 6
			}
			if j+size > i {
				i = j
			}
		}
	}
	return shownJSONText{Text: string(b[:i]), Len: len(b), Cut: true}
}

// shellQuoted is s between single quotes for a POSIX shell, so that a
// command a page suggests cannot run text from the trail. A quote in s
// becomes '"'"', with no backslash: the page shows the text through
// safetext.Escape, which doubles a backslash, so the usual quote,
// backslash, quote, quote would show two backslashes and end the
// quoting. Escape adds no quote, so what the page shows stays one
// argument.
func shellQuoted(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// indentedJSON is the JSON text src indented as json.Indent(dst, src, "",
// "  ") indents it, cut as cutJSONText cuts it to n bytes. Indenting
// multiplies a text's length by its depth (200 levels make a line of
// 24 MiB gigabytes long), so only the first n bytes and a few more are
// built; the rest is counted. src is valid JSON (the reader decoded it).
func indentedJSON(src []byte, n int) shownJSONText {
	in := indenter{keep: n + utf8.UTFMax}
	for _, c := range src {
		in.byte(c)
	}
	cut := cutJSONText(in.out, n)
	cut.Len, cut.Cut = in.total, in.total > n
	return cut
}

// indenter writes JSON text indented, keeping the first keep bytes.
type indenter struct {
	out             []byte
	keep, total     int
	depth           int
	str, esc, after bool // in a string, after its backslash, after an opening bracket
}

func (in *indenter) byte(c byte) {
	switch {
	case in.str:
		in.str = in.esc || c != '"'
		in.esc = !in.esc && c == '\\'
		in.put(c)
		return
	case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		return
	case in.after && c != ']' && c != '}':
		in.after = false
		in.newline()
	}
	switch c {
	case '"':
		in.str = true
		in.put(c)
	case '{', '[':
		in.put(c)
		in.after = true
		in.depth++
	case '}', ']':
		in.depth--
		if in.after {
			in.after = false // {} and [] stay on one line
		} else {
			in.newline()
		}
		in.put(c)
	case ',':
		in.put(c)
		in.newline()
	case ':':
		in.put(c)
		in.put(' ')
	default:
		in.put(c)
	}
}

func (in *indenter) newline() {
	in.put('\n')
	for i := range in.depth {
		if len(in.out) >= in.keep {
			in.total += 2 * (in.depth - i) // counted, not built
			return
		}
		in.put(' ')
		in.put(' ')
	}
}

func (in *indenter) put(c byte) {
	in.total++
	if len(in.out) < in.keep {
		in.out = append(in.out, c)
	}
}
