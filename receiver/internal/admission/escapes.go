package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// EscapeBound bounds the bytes of the canonical lines a body's JSON (or
// OTLP protobuf) decodes to, as far as escapes and numbers go: DEL becomes
// \u007f (five more bytes), a UTF-8 sequence of n bytes at most 6 or 12
// (two more per byte; the decoder refuses invalid UTF-8), and a number
// with an exponent at most 14 more (exponentBound). Everything else a line
// holds is at most as long as in the body, bar the fields the reference
// fills in, which Settle counts once decoded.
func EscapeBound(b []byte) int64 {
	return utf8Bound(b) + exponentBound(b)
}

// exponentGrowth is the most a number written with an exponent grows by in
// its canonical spelling: 1e15 becomes 1000000000000000.0 (4 bytes to 18);
// from 1e16 on the exponent is kept.
const exponentGrowth = 14

// exponentBound counts the e and E that follow a digit or a point, as a
// number's exponent does (and hex ids at times: a bound, not a count).
func exponentBound(b []byte) int64 {
	n := int64(0)
	for _, c := range []byte{'e', 'E'} {
		for i := 1; i < len(b); i++ {
			j := bytes.IndexByte(b[i:], c)
			if j < 0 {
				break
			}
			i += j
			if d := b[i-1]; d >= '0' && d <= '9' || d == '.' {
				n++
			}
		}
	}
	return n * exponentGrowth
}

// utf8Bound is EscapeBound's part for DEL and UTF-8 sequences.
func utf8Bound(b []byte) int64 {
	const highs = 0x8080808080808080
	const del = 0x7f7f7f7f7f7f7f7f
	high, dels := 0, 0
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// Bytes with the high bit set, and (over-counting at worst) bytes
		// equal to 0x7F: the zero bytes of w^del.
		x := w ^ del
		high += bits.OnesCount64(w & highs)
		dels += bits.OnesCount64((x - 0x0101010101010101) &^ x & highs &^ w)
	}
	for ; i < len(b); i++ {
		switch {
		case b[i] == 0x7f:
			dels++
		case b[i] >= 0x80:
			high++
		}
	}
	return int64(len(b) + 2*high + 5*dels)
}
