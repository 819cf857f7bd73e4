package auditevent

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The checker's objects, arrays and strings as they were written before
// keys and plain strings were read inline: a call per string (str), keys
// compared as slices. The differential tests below hold the checker to
// them, answer and member index alike. Numbers and literals are shared.

func (c *canonChecker) refValue(i int) (int, bool) {
	if i >= len(c.buf) {
		return i, false
	}
	switch c.buf[i] {
	case '{':
		return c.refObject(i)
	case '[':
		return c.refArray(i)
	case '"':
		end, _, ok := c.str(i)
		return end, ok
	}
	return c.value(i)
}

func (c *canonChecker) refObject(i int) (int, bool) {
	if !c.enter() {
		return i, false
	}
	i++
	if i < len(c.buf) && c.buf[i] == '}' {
		c.depth--
		return i + 1, true
	}
	var prev []byte
	for {
		if i >= len(c.buf) || c.buf[i] != '"' {
			return i, false
		}
		end, escaped, ok := c.str(i)
		if !ok || escaped {
			return i, false
		}
		key := c.buf[i+1 : end-1]
		if prev != nil && string(prev) >= string(key) {
			return i, false
		}
		prev = key
		if end >= len(c.buf) || c.buf[end] != ':' {
			return end, false
		}
		keyAt := i + 1
		if i, ok = c.refValue(end + 1); !ok {
			return i, false
		}
		if c.top != nil && c.depth == 2 {
			c.top.add(keyAt, end+1, i)
		}
		if i >= len(c.buf) {
			return i, false
		}
		switch c.buf[i] {
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

func (c *canonChecker) refArray(i int) (int, bool) {
	if !c.enter() {
		return i, false
	}
	i++
	if i < len(c.buf) && c.buf[i] == ']' {
		c.depth--
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = c.refValue(i); !ok || i >= len(c.buf) {
			return i, false
		}
		switch c.buf[i] {
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

// sameAsReference fails t unless the checker and the reference agree on
// b: as a whole object, and as a line's value at depth 1 with the member
// index of the objects at depth 2.
func sameAsReference(t *testing.T, b []byte) {
	t.Helper()
	ref := canonChecker{buf: b}
	end, ok := ref.refObject(0)
	want := len(b) >= 2 && b[0] == '{' && ok && end == len(b)
	if got := isCanonicalObject(b); got != want {
		t.Fatalf("isCanonicalObject(%q) = %v, reference %v", b, got, want)
	}
	var gotIdx, wantIdx memberIndex
	got := canonChecker{buf: b, depth: 1, top: &gotIdx}
	want2 := canonChecker{buf: b, depth: 1, top: &wantIdx}
	ge, gok := got.value(0)
	we, wok := want2.refValue(0)
	if gok != wok || gok && (ge != we || gotIdx != wantIdx) {
		t.Fatalf("value(%q) = %d, %v, %+v; reference %d, %v, %+v", b, ge, gok, gotIdx, we, wok, wantIdx)
	}
}

// TestCanonCheckMatchesReference: the canonical cases, every prefix of
// each and each with one byte changed at every offset, and random texts from a grammar of canonical and near-canonical
// pieces (escapes, raw control and non-ASCII bytes, keys out of order,
// strings across the eight-byte boundary, deep nesting).
func TestCanonCheckMatchesReference(t *testing.T) {
	for _, c := range canonCases {
		for n := range len(c.in) + 1 {
			sameAsReference(t, []byte(c.in[:n]))
		}
		for at := range len(c.in) {
			for _, m := range []byte(mutations) {
				b := []byte(c.in)
				b[at] = m
				sameAsReference(t, b)
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100_000 {
		var sb strings.Builder
		randomJSON(rng, &sb, 0, true)
		b := []byte(sb.String())
		sameAsReference(t, b)
		if len(b) > 0 {
			b[rng.IntN(len(b))] = mutations[rng.IntN(len(mutations))]
			sameAsReference(t, b)
		}
	}
}

// mutations are the bytes one change in a random text may bring.
const mutations = "\"{}[],:\\a0-.e\x01\x7f\xc3\xa9"

var (
	// Keys with bytes below the quote's ('!', ' ') sort before the quote
	// that ends a shorter key.
	// Keys and strings of 7, 8, 9, 15, 16 and 17 bytes, and raw UTF-8 or
	// an escape across the eight-byte boundary, test the word-at-a-time
	// scan's ends.
	randomKeys = []string{"", " ", "!", "!a", "a", "a ", "a!", "ab", "b", "command", "exit_code", "process.exit.code", "shell", "timeout_s", "user", "\\u00e9", "a\\\"b", "z\x01",
		"abcdefg", "abcdefgh", "abcdefgh!", "abcdefghijklmno", "abcdefghijklmnop", "abcdefghijklmnopq", "é", "abcdefgé", "abcdefg\\n"}
	randomStrings = []string{"", "x", "python", "tests/test_module_12.py", "12345678", "1234567\\n", "tab\\t", "\\u00e9", "\\ud83d\\ude00", "\\ud83d", "é", "q\\\"", "\x7f", "\\/",
		"abcdefghijklmnop", "abcdefgé", "abcdefghijklmnoé", "1234567\\u00e9"}
	randomScalars = []string{"0", "30", "-3", "1.5", "30.00", "1e+16", "-0", "true", "false", "null", "tru", "01"}
)

// randomJSON writes a random value to sb: mostly what MarshalData writes,
// sometimes not.
func randomJSON(rng *rand.Rand, sb *strings.Builder, depth int, object bool) {
	switch {
	case object || depth < 4 && rng.IntN(4) == 0:
		sb.WriteByte('{')
		n := rng.IntN(6)
		keys := make([]string, n)
		for k := range keys {
			keys[k] = randomKeys[rng.IntN(len(randomKeys))]
		}
		if rng.IntN(4) != 0 {
			slices.Sort(keys)
		}
		for k, key := range keys {
			if k > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(`"` + key + `":`)
			randomJSON(rng, sb, depth+1, false)
		}
		sb.WriteByte('}')
	case depth < 4 && rng.IntN(3) == 0:
		sb.WriteByte('[')
		for k := range rng.IntN(5) {
			if k > 0 {
				sb.WriteByte(',')
			}
			randomJSON(rng, sb, depth+1, false)
		}
		sb.WriteByte(']')
	case rng.IntN(2) == 0:
		sb.WriteString(`"` + randomStrings[rng.IntN(len(randomStrings))] + `"`)
	default:
		sb.WriteString(randomScalars[rng.IntN(len(randomScalars))])
	}
}

// FuzzCanonCheckReference: the checker answers as the reference does.
func FuzzCanonCheckReference(f *testing.F) {
	for _, c := range canonCases {
		f.Add([]byte(c.in))
	}
	f.Add(bytes.Repeat([]byte(`{"a":[`), 40))
	f.Fuzz(func(t *testing.T, b []byte) { sameAsReference(t, b) })
}
