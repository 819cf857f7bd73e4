package auditevent

import (
	"bytes"
	"strings"
	"testing"
)

// canonCases: text, and whether it is canonical as written. The
// expectations are written out by hand from SPEC section 2.
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
	// Not canonical: each breaks exactly one rule.
	{`{"b":1,"a":2}`, false},    // order
	{`{"a":1,"a":2}`, false},    // duplicate key
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
