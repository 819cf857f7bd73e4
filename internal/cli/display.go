package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
)

// displayText makes untrusted text safe for a terminal (see
// safetext.Escape).
func displayText(s string) string { return safetext.Escape(s) }

// errorText is an error's message made safe for a terminal: it may name a
// file, whose name is untrusted text too.
func errorText(err error) string { return safetext.Escape(err.Error()) }

// shownLines writes a command's messages to a terminal: each Write is one
// message (fmt.Fprintf writes once), shown as displayText shows text but
// for the newline that ends it. A file name, a field or an error's text in
// a message can then neither act on the terminal nor begin a line of its
// own, and no print site has to remember it.
type shownLines struct{ w io.Writer }

func (l shownLines) Write(p []byte) (int, error) {
	text, nl := bytes.CutSuffix(p, []byte("\n"))
	shown := displayText(string(text))
	if nl {
		shown += "\n"
	}
	if _, err := io.WriteString(l.w, shown); err != nil {
		return 0, err
	}
	return len(p), nil
}

// shown is s for a command that prints messages only (no trail lines, no
// JSON): stdout and stderr through shownLines. A command takes it once its
// flags are parsed, since a usage text is several lines in one Write.
func (s Streams) shown() Streams {
	return Streams{Stdin: s.Stdin, Stdout: shownLines{s.Stdout}, Stderr: shownLines{s.Stderr}}
}

// displayCut is displayText(s) cut to width characters, only between
// escapes (see safetext.EscapeCut).
func displayCut(s string, width int) string { return safetext.EscapeCut(s, width) }

// cut shortens s to width characters, marking a cut with "…".
func cut(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	n := 0
	for i := range s {
		if n == width-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// pad cuts s to width characters and pads it with spaces.
func pad(s string, width int) string {
	s = cut(s, width)
	if n := utf8.RuneCountInString(s); n < width {
		s += strings.Repeat(" ", width-n)
	}
	return s
}

// appendCell appends displayText(s) cut and padded to width characters, as
// pad does; plain ASCII, which needs neither escaping nor counting of
// characters, is appended without building a string.
func appendCell(b []byte, s string, width int) []byte {
	if !plainASCII(s) {
		return append(b, pad(displayCut(s, width), width)...)
	}
	if len(s) > width {
		return append(append(b, s[:width-1]...), "…"...)
	}
	return appendSpaces(append(b, s...), width-len(s))
}

// appendRight appends s, already cut, right-aligned in width characters.
func appendRight(b, s []byte, width int) []byte {
	return append(appendSpaces(b, width-utf8.RuneCount(s)), s...)
}

// spaces pads the table's cells, the widest of which is colWhat.
const spaces = "                                                                "

// appendSpaces appends n spaces (none when n <= 0).
func appendSpaces(b []byte, n int) []byte {
	for n > 0 {
		k := min(n, len(spaces))
		b = append(b, spaces[:k]...)
		n -= k
	}
	return b
}

// plainASCII reports whether s is printable ASCII without a backslash,
// which displayText leaves as it is.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e || s[i] == '\\' {
			return false
		}
	}
	return true
}

// jsonMarshalString is encoding/json's quoting of a string.
func jsonMarshalString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}
