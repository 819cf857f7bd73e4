// Package safetext shows untrusted text (a command, a path, an id read
// from an audit trail) so that it cannot act on what displays it, a
// terminal or a browser, nor hide from whoever reads it.
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Escape returns s with control characters (ANSI escapes included),
// invisible format characters (Unicode category Cf: bidirectional
// overrides, zero-width characters, the soft hyphen, tag characters), line
// and paragraph separators and invalid UTF-8 shown as escapes (\x1b,
// \u202e, \u200b, \U000e0041, \xff). A backslash is always shown as \\,
// even in text that needs no other escape, so the text of an escape never
// looks like the character it names: the result reads back, as a Go
// string literal, to exactly s. A variation selector that has nothing to
// change (see idleSelector) is shown as an escape too. Other text is left
// as it is.
func Escape(s string) string {
	i := strings.IndexFunc(s, mayShowAsEscape)
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	prev := noRune
	if i > 0 {
		prev, _ = utf8.DecodeLastRuneInString(s[:i])
	}
	for i < len(s) {
		var n int
		b, prev, n = appendShown(b, s[i:], prev)
		i += n
	}
	return string(b)
}

// noRune stands for no character before the first one.
const noRune rune = -1

// EscapeJSON returns the JSON text s with the characters Escape shows as
// escapes written as JSON escapes (\u202e; a surrogate pair above
// U+FFFF), so the result reads as the same JSON value, and invalid UTF-8
// as \xff, which no JSON text holds. Backslashes stay as they are: in
// JSON text a backslash always begins an escape, so none is misread. A
// newline, a tab or a carriage return stays too: JSON text holds them
// only as whitespace between values (indented JSON, a CRLF line end).
// A variation selector with nothing to change (see idleSelector) is a
// JSON escape too. Text with nothing to show is returned as it is.
func EscapeJSON(s string) string {
	i := strings.IndexFunc(s, mayShowInJSON)
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	prev := noRune
	if i > 0 {
		prev, _ = utf8.DecodeLastRuneInString(s[:i])
	}
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = fmt.Appendf(b, `\x%02x`, s[i])
		case !unsafeInJSON(r) && !idleSelector(prev, r):
			b = append(b, s[i:i+n]...)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			b = fmt.Appendf(b, `\u%04x\u%04x`, hi, lo)
		default:
			b = fmt.Appendf(b, `\u%04x`, r)
		}
		i, prev = i+n, r
	}
	return string(b)
}

// EscapeCut returns Escape(s) cut to at most width characters, ending in
// "…" when cut. The cut falls between two escapes (or characters), never
// inside an escape, whose fragment would read as another character.
func EscapeCut(s string, width int) string {
	if width <= 0 {
		return ""
	}
	e := Escape(s)
	if utf8.RuneCountInString(e) <= width {
		return e
	}
	b := make([]byte, 0, width+8)
	used, prev := 0, noRune
	for i := 0; i < len(s); {
		k := len(b)
		var n int
		b, prev, n = appendShown(b, s[i:], prev)
		if used += utf8.RuneCount(b[k:]); used > width-1 {
			b = b[:k]
			break
		}
		i += n
	}
	return string(b) + "…"
}

// appendShown appends the first character of s as Escape shows it, prev
// being the character before it, and returns it and how many bytes of s
// it took.
func appendShown(b []byte, s string, prev rune) ([]byte, rune, int) {
	r, n := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError && n == 1:
		return fmt.Appendf(b, `\x%02x`, s[0]), r, n
	case r == '\\':
		return append(b, `\\`...), r, n
	case r == '\n':
		return append(b, `\n`...), r, n
	case r == '\t':
		return append(b, `\t`...), r, n
	case !unsafeRune(r) && !idleSelector(prev, r):
		return append(b, s[:n]...), r, n
	case r < 0x80:
		return fmt.Appendf(b, `\x%02x`, r), r, n
	case r > 0xffff:
		return fmt.Appendf(b, `\U%08x`, r), r, n
	}
	return fmt.Appendf(b, `\u%04x`, r), r, n
}

// mayShowAsEscape reports whether Escape may show r as an escape: a
// variation selector is, or not, by the character before it.
func mayShowAsEscape(r rune) bool { return shownAsEscape(r) || isSelector(r) }

// isSelector reports whether r is a variation selector (Unicode's
// Variation_Selector property).
func isSelector(r rune) bool {
	return r >= 0xfe00 && r <= 0xfe0f || r >= 0xe0100 && r <= 0xe01ef || r >= 0x180b && r <= 0x180d || r == 0x180f
}

// idleSelector reports whether r is a variation selector with nothing to
// change after prev, so drawn as nothing: at the start, after another
// selector or a character shown as an escape, after ASCII but a keycap
// base (0-9, #, *), and an ideographic one (U+E0100 and up) after
// anything but a Han ideograph. A run of them can carry a hidden payload.
func idleSelector(prev, r rune) bool {
	switch {
	case !isSelector(r):
		return false
	case prev == noRune || isSelector(prev) || shownAsEscape(prev):
		return true
	case r >= 0xe0100:
		return !unicode.Is(unicode.Han, prev)
	case prev < 0x80:
		return !isKeycapBase(prev)
	}
	return false
}

// isKeycapBase reports whether r can take the keycap selector (0-9, #, *).
func isKeycapBase(r rune) bool { return r >= '0' && r <= '9' || r == '#' || r == '*' }

// mayShowInJSON reports whether EscapeJSON may show r as an escape.
func mayShowInJSON(r rune) bool { return unsafeInJSON(r) || isSelector(r) }

// unsafeInJSON is unsafeRune but for JSON's whitespace, which an escape
// would turn into text that is not JSON.
func unsafeInJSON(r rune) bool { return r != '\n' && r != '\t' && r != '\r' && unsafeRune(r) }

// shownAsEscape reports whether Escape shows r as an escape.
func shownAsEscape(r rune) bool { return r == '\\' || unsafeRune(r) }

// unsafeRune reports whether r acts on a display or cannot be seen there.
// Category Cf holds the bidirectional controls; Other_Default_Ignorable
// holds letters drawn as nothing (the Hangul fillers). Variation selectors
// change how the character before them looks and are left as they are.
func unsafeRune(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || r == '\u2028' || r == '\u2029'
}
