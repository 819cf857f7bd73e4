package auditevent

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// maxDepth bounds nesting like pydantic's JSON parser does, so hostile
// input cannot exhaust the stack.
const maxDepth = 200

// maxIntDigits is the longest integer token the reference reads: pydantic's
// JSON parser refuses longer ones ("number out of range"), counting a minus
// sign as one of the 4,300, so the reference can never emit them.
const maxIntDigits = 4300

func errIntTooLong() error {
	return &valueError{msg: fmt.Sprintf("integer longer than %d characters", maxIntDigits)}
}

// parser is a strict RFC 8259 reader that writes values back in canonical
// form (sorted keys, Python number spelling, ASCII escapes) as it goes.
type parser struct {
	buf   []byte
	pos   int
	depth int
	limit int // the most canonical text written; 0: no limit
}

// grow checks that dst may take n more bytes within the limit.
func (p *parser) grow(dst []byte, n int) error {
	if p.limit > 0 && len(dst)+n > p.limit {
		return &TooLongError{Limit: p.limit}
	}
	return nil
}

// syntaxError is a JSON syntax problem at a byte offset.
type syntaxError struct {
	off int
	msg string
}

// msgInvalidUTF8 is a syntaxError's msg for bytes that are not UTF-8; it
// reads "invalid UTF-8 at byte N".
const msgInvalidUTF8 = "invalid UTF-8"

func (e *syntaxError) Error() string {
	if e.msg == msgInvalidUTF8 {
		return fmt.Sprintf("%s at byte %d", msgInvalidUTF8, e.off)
	}
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.off, e.msg)
}

// valueError is a well-formed JSON value the reference cannot hold (an
// infinite float, an over-long integer, a lone surrogate).
type valueError struct{ msg string }

func (e *valueError) Error() string { return e.msg }

func (p *parser) fail(msg string) error { return &syntaxError{off: p.pos, msg: msg} }

func (p *parser) skipWS() {
	for p.pos < len(p.buf) {
		switch p.buf[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (p *parser) peek() byte {
	p.skipWS()
	if p.pos >= len(p.buf) {
		return 0
	}
	return p.buf[p.pos]
}

// canonValue reads one value and appends its canonical form to dst.
func (p *parser) canonValue(dst []byte) ([]byte, error) {
	switch c := p.peek(); {
	case c == '{':
		return p.canonObject(dst)
	case c == '[':
		return p.canonArray(dst)
	case c == '"':
		return p.canonString(dst)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.canonNumber(dst)
	case c == 't':
		return p.literal(dst, "true")
	case c == 'f':
		return p.literal(dst, "false")
	case c == 'n':
		return p.literal(dst, "null")
	case c == 'N' || c == 'I':
		return dst, p.fail("NaN and Infinity are not JSON numbers")
	default:
		return dst, p.unexpected()
	}
}

// unexpected describes the input at p.pos, where no JSON value starts:
// the end, a byte that is not UTF-8, a control byte (NUL included, which
// peek also returns at the end), or a character, quoted.
func (p *parser) unexpected() error {
	if p.pos >= len(p.buf) {
		return p.fail("unexpected end of input")
	}
	c := p.buf[p.pos]
	switch {
	case c >= utf8.RuneSelf:
		r, size := utf8.DecodeRune(p.buf[p.pos:])
		if r == utf8.RuneError && size == 1 {
			return p.fail(msgInvalidUTF8)
		}
		return p.fail(fmt.Sprintf("unexpected character %q", r))
	case c < 0x20 || c == 0x7f:
		return p.fail(fmt.Sprintf("unexpected control byte 0x%02x", c))
	}
	return p.fail(fmt.Sprintf("unexpected character %q", c))
}

func (p *parser) literal(dst []byte, lit string) ([]byte, error) {
	if !bytes.HasPrefix(p.buf[p.pos:], []byte(lit)) {
		return dst, p.fail("invalid literal")
	}
	p.pos += len(lit)
	return append(dst, lit...), nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return &DepthError{Off: p.pos, Max: maxDepth}
	}
	return nil
}

func (p *parser) canonArray(dst []byte) ([]byte, error) {
	if err := p.enter(); err != nil {
		return dst, err
	}
	p.pos++ // '['
	dst = append(dst, '[')
	if p.peek() == ']' {
		p.pos++
		p.depth--
		return append(dst, ']'), nil
	}
	for {
		var err error
		if dst, err = p.canonValue(dst); err != nil {
			return dst, err
		}
		switch p.peek() {
		case ',':
			p.pos++
			dst = append(dst, ',')
		case ']':
			p.pos++
			p.depth--
			return append(dst, ']'), nil
		default:
			return dst, p.fail("expected ',' or ']' in array")
		}
	}
}

// member is one object member already written in canonical form at
// dst[start:end]; key is its decoded name, for sorting.
type member struct {
	key        []byte
	start, end int
}

func (p *parser) canonObject(dst []byte) ([]byte, error) {
	if err := p.enter(); err != nil {
		return dst, err
	}
	p.pos++ // '{'
	if dst == nil {
		// Canonical text is about as long as its input: one allocation.
		dst = make([]byte, 0, min(len(p.buf)-p.pos+1, 4096))
	}
	base := len(dst)
	dst = append(dst, '{')
	if p.peek() == '}' {
		p.pos++
		p.depth--
		return append(dst, '}'), nil
	}
	var stack [8]member
	members := stack[:0]
	sorted := true
	for {
		if p.peek() != '"' {
			return dst, p.fail("expected a string key")
		}
		start := len(dst)
		key, err := p.readString()
		if err != nil {
			return dst, err
		}
		dst = appendQuotedBytes(dst, key)
		if p.peek() != ':' {
			return dst, p.fail("expected ':' after key")
		}
		p.pos++
		dst = append(dst, ':')
		if dst, err = p.canonValue(dst); err != nil {
			return dst, err
		}
		if n := len(members); n > 0 && bytes.Compare(members[n-1].key, key) >= 0 {
			sorted = false
		}
		members = append(members, member{key: key, start: start, end: len(dst)})
		switch p.peek() {
		case ',':
			p.pos++
			dst = append(dst, ',')
		case '}':
			p.pos++
			p.depth--
			if sorted {
				return append(dst, '}'), nil
			}
			return rewriteSorted(dst, base, members), nil
		default:
			return dst, p.fail("expected ',' or '}' in object")
		}
	}
}

// rewriteSorted reorders the members written at dst[base:] by key (code
// point order, which is UTF-8 byte order) and keeps only the last of equal
// keys, as Python's dict does for duplicate keys.
func rewriteSorted(dst []byte, base int, members []member) []byte {
	// Small objects (the usual data) are copied aside on the stack.
	var stack [512]byte
	region := append(stack[:0], dst[base:]...)
	slices.SortStableFunc(members, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	dst = append(dst[:base], '{')
	first := true
	for i, m := range members {
		if i+1 < len(members) && bytes.Equal(members[i+1].key, m.key) {
			continue // a later duplicate wins
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, region[m.start-base:m.end-base]...)
	}
	return append(dst, '}')
}

// canonString copies a string that needs no escaping straight through and
// re-escapes any other.
func (p *parser) canonString(dst []byte) ([]byte, error) {
	start := p.pos + 1
	if i := plainEnd(p.buf, start); i < len(p.buf) && p.buf[i] == '"' {
		if err := p.grow(dst, i+2-start); err != nil {
			return dst, err
		}
		p.pos = i + 1
		return append(dst, p.buf[start-1:i+1]...), nil
	}
	s, err := p.readString()
	if err != nil {
		return dst, err
	}
	// Counted before it is written: escapes make a string up to six times
	// its text.
	text := unsafe.String(unsafe.SliceData(s), len(s))
	if err := p.grow(dst, quotedLen(text)); err != nil {
		return dst, err
	}
	return appendQuoted(dst, text), nil
}

// readString decodes the string at p.pos. Without escapes it returns a
// sub-slice of the input; with escapes, a new slice.
func (p *parser) readString() ([]byte, error) {
	p.pos++ // opening quote
	start := p.pos
	var out []byte
	for p.pos < len(p.buf) {
		if out == nil {
			p.skipPlain()
			if p.pos >= len(p.buf) {
				break
			}
		}
		c := p.buf[p.pos]
		switch {
		case c == '"':
			var s []byte
			if out == nil {
				s = p.buf[start:p.pos]
			} else {
				s = out
			}
			p.pos++
			return s, nil
		case c == '\\':
			if out == nil {
				out = append(make([]byte, 0, p.pos-start+16), p.buf[start:p.pos]...)
			}
			var err error
			if out, err = p.readEscape(out); err != nil {
				return nil, err
			}
		case c < 0x20:
			return nil, p.fail("control character in string")
		case c < utf8.RuneSelf:
			if out != nil {
				out = append(out, c)
			}
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.buf[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, p.fail(msgInvalidUTF8)
			}
			if out != nil {
				out = append(out, p.buf[p.pos:p.pos+size]...)
			}
			p.pos += size
		}
	}
	return nil, p.fail("unterminated string")
}

// skipPlain moves past printable ASCII other than '"' and '\\', the bulk
// of most strings. plainEnd works on locals: a loop through p would reload
// p.buf and store p.pos for every byte.
func (p *parser) skipPlain() { p.pos = plainEnd(p.buf, p.pos) }

func (p *parser) readEscape(out []byte) ([]byte, error) {
	if p.pos+1 >= len(p.buf) {
		return out, p.fail("unterminated escape")
	}
	e := p.buf[p.pos+1]
	p.pos += 2
	switch e {
	case '"', '\\', '/':
		return append(out, e), nil
	case 'b':
		return append(out, '\b'), nil
	case 'f':
		return append(out, '\f'), nil
	case 'n':
		return append(out, '\n'), nil
	case 'r':
		return append(out, '\r'), nil
	case 't':
		return append(out, '\t'), nil
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return out, p.fail("invalid \\u escape")
		}
		if utf16.IsSurrogate(r) {
			// Lone surrogates cannot live in a Python str that pydantic
			// accepts (its JSON parser refuses them), so neither do we.
			if r >= 0xDC00 || !bytes.HasPrefix(p.buf[p.pos:], []byte(`\u`)) {
				return out, &valueError{msg: "lone surrogate in \\u escape"}
			}
			p.pos += 2
			r2, ok := p.hex4()
			if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
				return out, &valueError{msg: "lone surrogate in \\u escape"}
			}
			r = utf16.DecodeRune(r, r2)
		}
		return utf8.AppendRune(out, r), nil
	}
	return out, p.fail("invalid escape")
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.buf) {
		return 0, false
	}
	var r rune
	for _, c := range p.buf[p.pos : p.pos+4] {
		v := hexValue[c]
		if v > 0xF {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	p.pos += 4
	return r, true
}

// numberToken scans a JSON number and reports whether it is a float
// (has a fraction or exponent) in Python's sense.
func (p *parser) numberToken() (tok []byte, isFloat bool, err error) {
	start := p.pos
	i := p.pos
	if i < len(p.buf) && p.buf[i] == '-' {
		i++
	}
	switch {
	case i < len(p.buf) && p.buf[i] == '0':
		i++
	case i < len(p.buf) && p.buf[i] >= '1' && p.buf[i] <= '9':
		for i < len(p.buf) && p.buf[i] >= '0' && p.buf[i] <= '9' {
			i++
		}
	default:
		p.pos = i
		if i < len(p.buf) && p.buf[i] == 'I' {
			return nil, false, p.fail("NaN and Infinity are not JSON numbers")
		}
		return nil, false, p.fail("invalid number")
	}
	if i < len(p.buf) && p.buf[i] == '.' {
		isFloat = true
		i++
		d := i
		for i < len(p.buf) && p.buf[i] >= '0' && p.buf[i] <= '9' {
			i++
		}
		if i == d {
			p.pos = i
			return nil, false, p.fail("invalid number: no digits after '.'")
		}
	}
	if i < len(p.buf) && (p.buf[i] == 'e' || p.buf[i] == 'E') {
		isFloat = true
		i++
		if i < len(p.buf) && (p.buf[i] == '+' || p.buf[i] == '-') {
			i++
		}
		d := i
		for i < len(p.buf) && p.buf[i] >= '0' && p.buf[i] <= '9' {
			i++
		}
		if i == d {
			p.pos = i
			return nil, false, p.fail("invalid number: no exponent digits")
		}
	}
	p.pos = i
	return p.buf[start:i], isFloat, nil
}

func (p *parser) canonNumber(dst []byte) ([]byte, error) {
	tok, isFloat, err := p.numberToken()
	if err != nil {
		return dst, err
	}
	// A float's repr is at most 24 bytes (-1.2345678901234567e-308).
	if err := p.grow(dst, max(len(tok), 24)); err != nil {
		return dst, err
	}
	if isFloat {
		f, err := parseFloatTok(tok)
		if err != nil {
			return dst, err
		}
		return appendPyFloat(dst, f), nil
	}
	if len(tok) > maxIntDigits {
		return dst, errIntTooLong()
	}
	if len(tok) == 2 && tok[0] == '-' && tok[1] == '0' {
		return append(dst, '0'), nil // Python reads -0 as the integer 0
	}
	return append(dst, tok...), nil
}

func parseFloatTok(tok []byte) (float64, error) {
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, &valueError{msg: "invalid number"}
	}
	if math.IsInf(f, 0) {
		return 0, &valueError{msg: "number out of float range"}
	}
	return f, nil
}

// finish checks that only whitespace follows the value.
func (p *parser) finish() error {
	// By position, not peek: peek's 0 for the end is also a NUL byte, and
	// a NUL would hide whatever follows it.
	p.skipWS()
	if p.pos < len(p.buf) {
		return p.fail("unexpected data after the JSON value")
	}
	return nil
}

// skipValue validates one value without writing anything: the decoder uses
// it for fields whose value it reads later or never (unknown fields), so
// the whole body is still checked as JSON the reference would accept.
func (p *parser) skipValue() error {
	switch c := p.peek(); {
	case c == '{' || c == '[':
		if err := p.enter(); err != nil {
			return err
		}
		p.pos++
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if p.peek() == end {
			p.pos++
			p.depth--
			return nil
		}
		for {
			if c == '{' {
				if p.peek() != '"' {
					return p.fail("expected a string key")
				}
				if err := p.skipString(); err != nil {
					return err
				}
				if p.peek() != ':' {
					return p.fail("expected ':' after key")
				}
				p.pos++
			}
			if err := p.skipValue(); err != nil {
				return err
			}
			switch p.peek() {
			case ',':
				p.pos++
			case end:
				p.pos++
				p.depth--
				return nil
			default:
				return p.fail("expected ',' or a closing bracket")
			}
		}
	case c == '"':
		return p.skipString()
	case c == '-' || (c >= '0' && c <= '9'):
		err := p.skipNumber()
		return err
	case c == 't':
		return p.skipLiteral("true")
	case c == 'f':
		return p.skipLiteral("false")
	case c == 'n':
		return p.skipLiteral("null")
	case c == 'N' || c == 'I':
		return p.fail("NaN and Infinity are not JSON numbers")
	default:
		return p.unexpected()
	}
}

func (p *parser) skipLiteral(lit string) error {
	if !bytes.HasPrefix(p.buf[p.pos:], []byte(lit)) {
		return p.fail("invalid literal")
	}
	p.pos += len(lit)
	return nil
}

// skipString validates a string: escapes, surrogate pairs, UTF-8.
func (p *parser) skipString() error {
	p.pos++
	for p.pos < len(p.buf) {
		p.skipPlain()
		if p.pos >= len(p.buf) {
			break
		}
		c := p.buf[p.pos]
		switch {
		case c == '"':
			p.pos++
			return nil
		case c == '\\':
			var scratch [4]byte
			if _, err := p.readEscape(scratch[:0]); err != nil {
				return err
			}
		case c < 0x20:
			return p.fail("control character in string")
		case c < utf8.RuneSelf:
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.buf[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return p.fail(msgInvalidUTF8)
			}
			p.pos += size
		}
	}
	return p.fail("unterminated string")
}

func (p *parser) skipNumber() error {
	tok, isFloat, err := p.numberToken()
	if err != nil {
		return err
	}
	if isFloat {
		// Range is checked where the value is used: an out-of-range float
		// in an ignored field is harmless, in data or duration_ms it is not.
		return nil
	}
	if len(tok) > maxIntDigits {
		return errIntTooLong()
	}
	return nil
}
