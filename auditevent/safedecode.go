package auditevent

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis marks truncated exec output.
const Ellipsis = "\u2026"

// SafeDecode decodes b as UTF-8 the way Python's
// bytes.decode("utf-8", errors="replace") does, replacing each maximal
// invalid subpart with one U+FFFD (Go's []rune conversion would replace a
// truncated sequence byte by byte), then keeps at most maxChars code points,
// appending "…" when it cut anything.
func SafeDecode(b []byte, maxChars int) string {
	if maxChars < 0 {
		maxChars = 0
	}
	// At most 4 bytes per kept code point, worked out without maxChars*4,
	// which overflows for a limit near the int range (a legal config).
	grow := len(b)
	if maxChars <= len(b)/4 {
		grow = maxChars * 4
	}
	var sb strings.Builder
	sb.Grow(grow + len(Ellipsis))
	n := 0
	for i := 0; i < len(b); {
		if n == maxChars {
			sb.WriteString(Ellipsis)
			return sb.String()
		}
		c := b[i]
		if c < utf8.RuneSelf {
			sb.WriteByte(c)
			i++
			n++
			continue
		}
		size := validPrefix(b[i:])
		if size > 0 && isComplete(c, size) {
			sb.Write(b[i : i+size])
			i += size
		} else {
			sb.WriteRune(utf8.RuneError)
			i += max(size, 1)
		}
		n++
	}
	return sb.String()
}

// seqLen is the length of the sequence a valid lead byte starts; 0 if c can
// never start one.
func seqLen(c byte) int {
	switch {
	case c >= 0xC2 && c <= 0xDF:
		return 2
	case c >= 0xE0 && c <= 0xEF:
		return 3
	case c >= 0xF0 && c <= 0xF4:
		return 4
	}
	return 0
}

func isComplete(lead byte, size int) bool { return seqLen(lead) == size }

// validPrefix returns how many bytes at the start of b form the longest
// prefix of a well-formed sequence (Unicode's "maximal subpart"): the whole
// sequence when valid, fewer when it is cut short, 0 for a bad lead byte.
func validPrefix(b []byte) int {
	want := seqLen(b[0])
	if want == 0 {
		return 0
	}
	lo, hi := byte(0x80), byte(0xBF)
	switch b[0] {
	case 0xE0:
		lo = 0xA0
	case 0xED:
		hi = 0x9F
	case 0xF0:
		lo = 0x90
	case 0xF4:
		hi = 0x8F
	}
	n := 1
	for n < want && n < len(b) {
		c := b[n]
		if c < lo || c > hi {
			break
		}
		lo, hi = 0x80, 0xBF
		n++
	}
	return n
}
