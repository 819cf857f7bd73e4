package auditevent

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// safeASCII[b] is true for bytes Python's json.dumps(ensure_ascii=True)
// writes as themselves: U+0020..U+007E minus '"' and '\\'. DEL (U+007F) is
// escaped, as the reference and its vectors escape it (docs/decisions.md,
// "Where the contract was unclear, and what we chose"). The table covers every
// byte value (false from 0x80) so that a loop needs one look per byte.
var safeASCII = func() (t [256]bool) {
	for b := 0x20; b < 0x7F; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// plainEnd returns the index of the first byte of b at or after i that is
// not safeASCII: the end of a run of plain string text. It reads eight
// bytes at a time while eight remain, so a short key or word usually takes
// one look.
func plainEnd(b []byte, i int) int {
	for i >= 0 && i+8 <= len(b) {
		if m := unsafeBytes(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && safeASCII[b[i]] {
		i++
	}
	return i
}

// unsafeBytes sets the high bit of each byte of w (eight bytes of text,
// little-endian) that is not safeASCII: below 0x20, above 0x7E, '"' or
// '\\'. The lowest bit set is exact, so it marks the first such byte: a
// borrow or a carry leaves only a byte that is itself marked, so bits
// above it may be wrong. A byte above 0x7F is marked by its own high bit,
// which also covers the other tests' answers for such bytes.
func unsafeBytes(w uint64) uint64 {
	const ones = 0x0101010101010101
	special := w | (w - ones*0x20) | (w + ones) // below 0x20 or above 0x7E
	special |= (w ^ (ones * '"')) - ones
	special |= (w ^ (ones * '\\')) - ones
	return special & (ones * 0x80)
}

// appendQuoted appends s as a JSON string the way Python's
// json.dumps(ensure_ascii=True) writes it: short escapes for the usual
// controls, \u00XX for the others, and \uXXXX (surrogate pairs above U+FFFF)
// for everything outside ASCII. Invalid UTF-8 cannot come from JSON intake;
// if a Go producer supplies it, each bad byte becomes \ufffd so the output
// stays valid JSON.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := safeRun(s); i < len(s); i += safeRun(s[i:]) {
		b := s[i]
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"':
				dst = append(dst, '\\', '"')
			case '\\':
				dst = append(dst, '\\', '\\')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = appendU4(dst, rune(b))
			}
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			r -= 0x10000
			dst = appendU4(dst, 0xD800+(r>>10))
			dst = appendU4(dst, 0xDC00+(r&0x3FF))
		} else {
			// RuneError with size 1 (an invalid byte) lands here as \ufffd.
			dst = appendU4(dst, r)
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u',
		hexDigits[(r>>12)&0xF], hexDigits[(r>>8)&0xF], hexDigits[(r>>4)&0xF], hexDigits[r&0xF])
}

// appendOptQuoted writes a nullable string.
func appendOptQuoted(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendQuoted(dst, *s)
}

// appendQuotedBytes is appendQuoted for a byte slice; the common all-ASCII
// case is copied without converting to a string.
func appendQuotedBytes(dst []byte, b []byte) []byte {
	if safeRun(b) < len(b) {
		return appendQuoted(dst, string(b))
	}
	dst = append(dst, '"')
	dst = append(dst, b...)
	return append(dst, '"')
}

// safeRun returns how many leading bytes of s are safeASCII, eight at a
// time: quoting spends most of its time in runs of plain text.
func safeRun[T string | []byte](s T) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		// One bounds check for the eight bytes, which load as one word.
		b := s[i : i+8]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if m := unsafeBytes(w); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(s) && safeASCII[s[i]] {
		i++
	}
	return i
}
