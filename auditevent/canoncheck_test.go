package auditevent

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// canonCases: text, and whether it is canonical as written. The
// expectations are written out by hand from docs/format.md, "The
// canonical line".
var canonCases = []struct {
	in    string
	canon bool
}{
	{`{}`, true},
	{`{"a":1}`, true},
	{`{"command":["python","-c","print(1)"],"cwd":"/workspace","timeout_s":30.0}`, true},
	{`{"a":{"b":[1,2.5,true,false,null,{}],"c":[]},"b":"x"}`, true},
	{`{"big":1180591620717411303424,"f":1e-05,"g":1e+16,"h":-0.0,"i":-3,"j":1.2345678901234568e+16}`, true},
	{`{"s":"tab\tnl\nq\"bs\\ctl\u0001del\u007f\u00e9\ud83d\ude00"}`, true},
	{`{"exit_code":0,"process.exit.code":0}`, true},
	{`{"":1," ":2,"!":3,"a":4,"a!":5}`, true}, // code-point order, '!' before a longer key's quote
	// Not canonical: each breaks exactly one rule.
	{`{"b":1,"a":2}`, false},    // order
	{`{"a":1,"a":2}`, false},    // duplicate key
	{`{"a!":1,"a":2}`, false},   // order: a prefix first
	{`{"!":1,"":2}`, false},     // order: the empty key first
	{`{"a": 1}`, false},         // whitespace
	{` {"a":1}`, false},         // leading whitespace
	{`{"a":1} `, false},         // trailing whitespace
	{`{"a":30}`, true},          // an integer stays an integer
	{`{"a":30.00}`, false},      // float spelling
	{`{"a":1E2}`, false},        // float spelling
	{`{"a":1e16}`, false},       // Python writes 1e+16
	{`{"a":0.00001}`, false},    // Python writes 1e-05
	{`{"a":-0}`, false},         // Python reads -0 as 0
	{`{"a":"\u0041"}`, false},   // escape of a printable
	{`{"a":"\u00E9"}`, false},   // uppercase hex
	{`{"a":"\u000a"}`, false},   // \n has a short form
	{`{"a":"\/"}`, false},       // '/' is written as is
	{`{"a":"é"}`, false},        // raw non-ASCII
	{"{\"a\":\"\x7f\"}", false}, // raw DEL
	{`{"a":"\ud83d"}`, false},   // lone surrogate
	{`{"a":"\ude00"}`, false},   // lone low surrogate
	{`{"\u00e9":1}`, false},     // escaped key: not compared, slow path
	{`{"a":1e400}`, false},      // out of range
	{`{"a":[1,]}`, false},       // syntax
	{`{"a":tru}`, false},        // syntax
	{`{"a":1`, false},           // truncated
	{`[1]`, false},              // not an object
	{`{"a":` + strings.Repeat("[", 201) + strings.Repeat("]", 201) + `}`, false}, // too deep
}

func TestIsCanonicalObject(t *testing.T) {
	for _, c := range canonCases {
		if got := isCanonicalObject([]byte(c.in)); got != c.canon {
			t.Errorf("isCanonicalObject(%s) = %v, want %v", c.in, got, c.canon)
		}
		// Whatever the checker accepts, the canonicalizer writes back
		// unchanged; its "no" may be conservative but not the reverse.
		if c.canon {
			d, err := canonicalizeData([]byte(c.in))
			if err != nil || d.String() != c.in {
				t.Errorf("canonical case %s canonicalizes to %s (%v)", c.in, d, err)
			}
		}
	}
}

// A data object from a string is kept without a copy when canonical, and
// canonicalized (same result as ParseData) otherwise.
func TestParseDataStringFastAndSlowPaths(t *testing.T) {
	for _, c := range canonCases {
		fromBytes, errB := ParseData([]byte(c.in))
		fromString, errS := ParseDataString(c.in)
		if (errB == nil) != (errS == nil) || fromBytes.String() != fromString.String() {
			t.Errorf("%s: ParseData = %s, %v; ParseDataString = %s, %v", c.in, fromBytes, errB, fromString, errS)
		}
	}
	s := strings.Clone(`{"a":1,"b":[2]}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := ParseDataString(s); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("canonical ParseDataString allocated %v times", allocs)
	}
}

// FuzzCanonCheck: the checker never calls text canonical that the
// canonicalizer would change or reject, and both parse entry points agree.
func FuzzCanonCheck(f *testing.F) {
	for _, c := range canonCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		slow, slowErr := canonicalizeData(in)
		if isCanonicalObject(in) {
			if slowErr != nil {
				t.Fatalf("checker accepted %q, canonicalizer rejects it: %v", in, slowErr)
			}
			if !bytes.Equal(slow.Bytes(), in) && (len(in) != 2 || !slow.IsEmpty()) {
				t.Fatalf("checker accepted %q, canonical form is %q", in, slow.Bytes())
			}
		}
		fast, fastErr := ParseDataString(string(in))
		if (slowErr == nil) != (fastErr == nil) || !bytes.Equal(slow.Bytes(), fast.Bytes()) {
			t.Fatalf("%q: canonicalize = %q, %v; ParseDataString = %q, %v", in, slow.Bytes(), slowErr, fast.Bytes(), fastErr)
		}
	})
}

// exactRepr is the slow check shortFixedRepr stands in for.
func exactRepr(tok string) bool {
	f, err := parseFloatTok([]byte(tok))
	return err == nil && string(appendReprFloat(nil, f)) == tok
}

func TestShortFixedRepr(t *testing.T) {
	// Expectations from Python's repr, written out by hand.
	cases := []struct {
		tok  string
		fast bool // answered by the fast path
		repr bool // is repr's spelling
	}{
		{"30.0", true, true},
		{"-0.0", true, true},
		{"0.0", true, true},
		{"2.345", true, true},
		{"0.1", true, true},
		{"0.0001", true, true},
		{"100.0", true, true},
		{"123456789012345.0", true, true},
		{"1000000000000000.0", true, true},
		{"12345678901234.5", true, true},
		{"0.00001", false, false},             // repr: 1e-05
		{"1.50", false, false},                // trailing zero
		{"30.00", false, false},               // trailing zero
		{"1e-05", false, true},                // exponent: exact path
		{"1e+16", false, true},                // exponent: exact path
		{"0.30000000000000004", false, true},  // 17 digits: exact path
		{"1234567890123456.0", false, true},   // 16 digits: exact path
		{"10000000000000000.0", false, false}, // repr: 1e+16
	}
	for _, c := range cases {
		if got := shortFixedRepr([]byte(c.tok)); got != c.fast {
			t.Errorf("shortFixedRepr(%s) = %v, want %v", c.tok, got, c.fast)
		}
		if got := exactRepr(c.tok); got != c.repr {
			t.Errorf("exact check of %s = %v, want %v", c.tok, got, c.repr)
		}
	}
}

// Whatever the fast path accepts, the exact check accepts: random fixed
// spellings of up to 18 digits around the limits of the fast path.
func TestShortFixedReprNeverWrong(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 12))
	accepted := 0
	for range 300_000 {
		tok := randomFixed(rng)
		if shortFixedRepr([]byte(tok)) {
			accepted++
			if !exactRepr(tok) {
				t.Fatalf("fast path accepts %s, which is not repr's spelling", tok)
			}
		}
	}
	if accepted < 50_000 {
		t.Fatalf("fast path accepted only %d of 300000 tokens; the test is not exercising it", accepted)
	}
}

// randomFixed spells a number in fixed notation: an optional sign, a whole
// part of 0 to 17 digits (or "0") and a fraction of 1 to 18 digits, with
// leading zeros and trailing zeros at random.
func randomFixed(rng *rand.Rand) string {
	var b []byte
	if rng.IntN(4) == 0 {
		b = append(b, '-')
	}
	if n := rng.IntN(18); n == 0 {
		b = append(b, '0')
	} else {
		b = append(b, byte('1'+rng.IntN(9)))
		for range n - 1 {
			b = append(b, randomDigit(rng))
		}
	}
	b = append(b, '.')
	zeros := rng.IntN(6)
	n := 1 + rng.IntN(18)
	for i := range n {
		if i < zeros {
			b = append(b, '0')
		} else {
			b = append(b, randomDigit(rng))
		}
	}
	return string(b)
}

// randomDigit favours 0 and 9, where rounding and trailing zeros live.
func randomDigit(rng *rand.Rand) byte {
	switch rng.IntN(4) {
	case 0:
		return '0'
	case 1:
		return '9'
	}
	return byte('0' + rng.IntN(10))
}

// BenchmarkCanonicalCheck is the one-scan check on an exec's finish data as
// sandboxtrace writes it, the text every span carries twice.
func BenchmarkCanonicalCheck(b *testing.B) {
	data := []byte(`{"command":["python","-m","pytest","-q","tests/test_module_12.py"],"exit_code":0,"process.exit.code":0,"shell":false,"timeout_s":30.0,"user":null}`)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if !isCanonicalObject(data) {
			b.Fatal("not canonical")
		}
	}
}
