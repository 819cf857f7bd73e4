package auditevent

import (
	"encoding/binary"
	"math/bits"
)

// canonChecker reports, in one scan and without building anything, whether
// JSON text is already exactly what the canonicalizing parser would write:
// no whitespace, keys in strictly increasing code-point order, numbers and
// strings spelled canonically. Producers that use MarshalData (sandboxtrace)
// send data in that form, so the span mapping can keep their text as is.
//
// It is conservative: a "no" only means "take the canonicalizing path",
// which also produces any error. Keys containing escapes are answered "no"
// rather than decoded for comparison.
type canonChecker struct {
	buf   []byte
	depth int
	top   *memberIndex // when set, where the members of an object at depth 2 sit
}

// memberIndex records where the first members of one object sit, by
// position in the text checked, so that a reader finds a member without
// walking the object again.
type memberIndex struct {
	n    int  // members recorded
	over bool // the object has more than fit
	// Each member's key text starts at key and ends two bytes before
	// value (its quote and the colon); the value ends at end.
	m [maxIndexed]struct{ key, value, end int32 }
}

// maxIndexed is how many members a memberIndex holds: data objects the
// collector writes have a handful.
const maxIndexed = 8

func (x *memberIndex) add(key, value, end int) {
	if x.n == len(x.m) {
		x.over = true
		return
	}
	x.m[x.n].key, x.m[x.n].value, x.m[x.n].end = int32(key), int32(value), int32(end)
	x.n++
}

// isCanonicalObject reports whether b is one JSON object in canonical form.
func isCanonicalObject(b []byte) bool {
	if len(b) < 2 || b[0] != '{' {
		return false
	}
	c := canonChecker{buf: b}
	end, ok := c.object(0)
	return ok && end == len(b)
}

// value checks the value at i and returns the index after it. A plain
// string, most of data's values, is read inline.
func (c *canonChecker) value(i int) (int, bool) {
	b := c.buf
	if i >= len(b) {
		return i, false
	}
	switch v := b[i]; {
	case v == '"':
		if q := plainTo(b, i+1); q < len(b) && b[q] == '"' {
			return q + 1, true
		}
		end, _, ok := c.str(i)
		return end, ok
	case v == '{':
		return c.object(i)
	case v == '[':
		return c.array(i)
	case v == '-' || (v >= '0' && v <= '9'):
		return c.number(i)
	case v == 't':
		return c.literal(i, "true")
	case v == 'f':
		return c.literal(i, "false")
	case v == 'n':
		return c.literal(i, "null")
	}
	return i, false
}

func (c *canonChecker) literal(i int, lit string) (int, bool) {
	end := i + len(lit)
	return end, end <= len(c.buf) && string(c.buf[i:end]) == lit
}

func (c *canonChecker) enter() bool {
	c.depth++
	return c.depth <= maxDepth
}

// object checks the object at i and returns the index after it. Keys, most
// of data's text with plain string values, are read inline: a call per key
// would cost as much as its look.
func (c *canonChecker) object(i int) (int, bool) {
	if !c.enter() {
		return i, false
	}
	b := c.buf
	i++ // '{'
	if i < len(b) && b[i] == '}' {
		c.depth--
		return i + 1, true
	}
	prevAt, prevEnd := 0, -1 // the previous key is b[prevAt:prevEnd]
	for {
		// Canonical keys are plain text, each after the one before.
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		q := plainTo(b, i+1)
		if q+1 >= len(b) || b[q] != '"' || b[q+1] != ':' {
			return q, false
		}
		keyAt := i + 1
		if prevEnd >= 0 && !keysOrdered(b, prevAt, prevEnd, keyAt, q) {
			return i, false
		}
		prevAt, prevEnd = keyAt, q
		var ok bool
		if i, ok = c.value(q + 2); !ok {
			return i, false
		}
		if c.top != nil && c.depth == 2 {
			c.top.add(keyAt, q+2, i)
		}
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			c.depth--
			return i + 1, true
		default:
			return i, false
		}
	}
}

// keysOrdered reports whether the raw key b[a:aEnd] sorts strictly before
// b[k:kEnd]: raw ASCII keys compare like their code points, and equal keys
// are duplicates, which canonical text never has. Their first bytes, which
// differ for most neighbouring keys, decide without slicing either.
func keysOrdered(b []byte, a, aEnd, k, kEnd int) bool {
	if a < aEnd && k < kEnd && b[a] != b[k] {
		return b[a] < b[k]
	}
	return string(b[a:aEnd]) < string(b[k:kEnd])
}

func (c *canonChecker) array(i int) (int, bool) {
	if !c.enter() {
		return i, false
	}
	b := c.buf
	i++ // '['
	if i < len(b) && b[i] == ']' {
		c.depth--
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = c.value(i); !ok || i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i++
		case ']':
			c.depth--
			return i + 1, true
		default:
			return i, false
		}
	}
}

// str checks a string spelled as appendQuoted spells it: printable ASCII
// as is, the short escapes, and \u escapes (lowercase hex) only for what
// has no short form, surrogates only as a high-low pair. It returns the
// index after the closing quote and whether any escape occurred.
func (c *canonChecker) str(i int) (end int, escaped, ok bool) {
	b := c.buf
	for i++; i < len(b); i++ {
		if i = plainTo(b, i); i >= len(b) {
			break
		}
		switch b[i] {
		case '"':
			return i + 1, escaped, true
		case '\\':
			escaped = true
			if i+1 >= len(b) {
				return i, escaped, false
			}
			switch b[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i++
				continue
			case 'u':
				n, ok := c.u4(i)
				if !ok {
					return i, escaped, false
				}
				i = n - 1
				continue
			}
		}
		return i, escaped, false
	}
	return i, escaped, false
}

// u4 checks the \uXXXX escape (or surrogate pair) at i and returns the
// index after it.
func (c *canonChecker) u4(i int) (int, bool) {
	r, ok := lowerHex4(c.buf, i+2)
	if !ok {
		return i, false
	}
	switch {
	case r >= 0xD800 && r < 0xDC00:
		if i+12 > len(c.buf) || c.buf[i+6] != '\\' || c.buf[i+7] != 'u' {
			return i, false
		}
		lo, ok := lowerHex4(c.buf, i+8)
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return i, false
		}
		return i + 12, true
	case r >= 0xDC00 && r <= 0xDFFF:
		return i, false
	case r >= 0x20 && r < 0x7F:
		return i, false // written as itself (or a short escape)
	case r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
		return i, false // has a short escape
	}
	return i + 6, true
}

// lowerHex4 reads four lowercase hex digits at b[i:].
func lowerHex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, ch := range b[i : i+4] {
		switch {
		case ch >= '0' && ch <= '9':
			r = r<<4 | rune(ch-'0')
		case ch >= 'a' && ch <= 'f':
			r = r<<4 | rune(ch-'a'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number checks an integer (exact, no -0, within the digit limit) or a
// float spelled as Python's repr spells it.
func (c *canonChecker) number(i int) (int, bool) {
	if end, ok := c.plainInt(i); ok {
		return end, true
	}
	if end, ok := c.plainFixed(i); ok {
		return end, true
	}
	p := parser{buf: c.buf, pos: i}
	tok, isFloat, err := p.numberToken()
	if err != nil {
		return p.pos, false
	}
	if isFloat {
		if shortFixedRepr(tok) {
			return p.pos, true
		}
		f, err := parseFloatTok(tok)
		if err != nil {
			return p.pos, false
		}
		var spell [32]byte
		return p.pos, string(appendPyFloat(spell[:0], f)) == string(tok)
	}
	if len(tok) > maxIntDigits || string(tok) == "-0" {
		return p.pos, false
	}
	return p.pos, true
}

// plainInt is the common number, a non-negative integer such as an exit
// code, read without the tokenizer: it reports whether the digits at i are
// one (canonical, so no leading zero) and where they end; anything else,
// a fraction or an exponent after them included, is for number to read.
func (c *canonChecker) plainInt(i int) (int, bool) {
	b := c.buf
	if i >= len(b) || b[i] < '0' || b[i] > '9' {
		return i, false
	}
	j := i + 1
	if b[i] != '0' {
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	}
	if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] >= '0' && b[j] <= '9') {
		return i, false
	}
	return j, j-i <= maxIntDigits
}

// plainFixed is the common float, such as a duration in milliseconds,
// read without the tokenizer: digits (no leading zero), a point and digits,
// with nothing of a number after them, that shortFixedRepr answers yes
// for. Anything else is for number to read.
func (c *canonChecker) plainFixed(i int) (int, bool) {
	b := c.buf
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	digits := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == digits || j-digits > 1 && b[digits] == '0' || j >= len(b) || b[j] != '.' {
		return i, false
	}
	j++
	frac := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == frac || j < len(b) && (b[j] == 'e' || b[j] == 'E' || b[j] == '.') {
		return i, false
	}
	return j, shortFixedRepr(b[i:j])
}

// shortFixedRepr reports whether a float token is surely Python's repr of
// its value, without converting it (the exact check costs a parse and a
// format). It answers yes only for fixed notation with at most 15
// significant digits, no trailing zero after the point (other than a lone
// ".0"), and a first significant digit between 10^-4 and 10^15. A decimal of
// at most 15 significant digits survives the trip through a double
// (DBL_DIG), so no shorter or nearer spelling names the same double, and
// repr writes that range in fixed notation. Everything else takes the exact
// check.
func shortFixedRepr(tok []byte) bool {
	if tok[0] == '-' {
		tok = tok[1:]
	}
	dot := 0
	for dot < len(tok) && tok[dot] != '.' {
		dot++
	}
	whole, frac := tok[:dot], tok[min(dot+1, len(tok)):]
	if dot == len(tok) || len(frac) == 0 {
		return false
	}
	for _, c := range frac {
		if c < '0' || c > '9' {
			return false // an exponent
		}
	}
	integral := string(frac) == "0"
	if !integral && frac[len(frac)-1] == '0' {
		return false
	}
	if string(whole) != "0" {
		sig := len(whole) + len(frac)
		if integral {
			sig = len(whole)
			for sig > 1 && whole[sig-1] == '0' {
				sig--
			}
		}
		return len(whole) <= 16 && sig <= 15
	}
	if integral {
		return true // 0.0 and -0.0
	}
	zeros := 0
	for frac[zeros] == '0' {
		zeros++
	}
	return zeros <= 3 && len(frac)-zeros <= 15
}

// plainTo is plainEnd small enough to be inlined: the checker reads keys
// and strings, mostly short words, with it, and a call would cost as much
// as the look.
func plainTo(b []byte, i int) int {
	for i+8 <= len(b) {
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
