package auditevent_test

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

func TestMarshalDataKeepsPythonTypes(t *testing.T) {
	big70, _ := new(big.Int).SetString("1180591620717411303424", 10)
	d, err := auditevent.MarshalData(map[string]any{
		"timeout_s": 30.0, "n": 3, "u": uint64(math.MaxUint64), "big": big70, "num": json.Number("1E2"),
		"cmd": []string{"sh", "-lc"}, "nested": map[string]any{"b": nil, "a": []any{1.5, true}},
		"f32": float32(0.1), "ptr": (*int)(nil), "é": "ü",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"big":1180591620717411303424,"cmd":["sh","-lc"],"f32":0.1,"n":3,"nested":{"a":[1.5,true],"b":null},"num":100.0,"ptr":null,"timeout_s":30.0,"u":18446744073709551615,"\u00e9":"\u00fc"}`
	if d.String() != want {
		t.Fatalf("got  %s\nwant %s", d, want)
	}
	if _, err := auditevent.MarshalData(map[string]any{"x": math.NaN()}); err == nil {
		t.Fatal("NaN accepted")
	}
}

func TestDataWithoutAndLookup(t *testing.T) {
	d := auditevent.MustParseData(`{"path":"/a","bytes":5,"meta":{"bytes":1}}`)
	if got := d.Without("bytes").String(); got != `{"meta":{"bytes":1},"path":"/a"}` {
		t.Fatalf("Without(bytes) = %s", got)
	}
	if got := d.String(); got != `{"bytes":5,"meta":{"bytes":1},"path":"/a"}` {
		t.Fatalf("receiver modified: %s", got)
	}
	for _, c := range []struct{ in, key, want string }{
		{`{"bytes":5}`, "bytes", `{}`},
		{`{"a":1,"bytes":5}`, "bytes", `{"a":1}`},
		{`{"bytes":5,"c":1}`, "bytes", `{"c":1}`},
		{`{"a":"bytes"}`, "bytes", `{"a":"bytes"}`},
	} {
		if got := auditevent.MustParseData(c.in).Without(c.key).String(); got != c.want {
			t.Errorf("%s without %s = %s, want %s", c.in, c.key, got, c.want)
		}
	}
	if v, ok := d.Lookup("meta"); !ok || string(v) != `{"bytes":1}` {
		t.Fatalf("Lookup(meta) = %s, %v", v, ok)
	}
	if _, ok := d.Lookup("nope"); ok {
		t.Fatal("Lookup found a missing key")
	}
}

func TestPolicyOverrideAtDefaultValueStillOverrides(t *testing.T) {
	set := auditevent.PolicySet{
		Default: auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(true), MaxStdoutChars: auditevent.Ptr(5)},
		ByOp:    map[string]auditevent.PolicyOverride{"exec": {MaxStdoutChars: auditevent.Ptr(8000)}},
		Sink:    auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(false)},
	}
	got := set.Resolve("exec")
	want := auditevent.Policy{IncludeExecOutput: false, MaxStdoutChars: 8000, MaxStderrChars: 8000, IncludeWriteLen: true}
	if got != want {
		t.Fatalf("Resolve(exec) = %+v, want %+v", got, want)
	}
	if got := set.Resolve("read"); got.MaxStdoutChars != 5 || got.IncludeExecOutput {
		t.Fatalf("Resolve(read) = %+v", got)
	}
	if err := (auditevent.PolicyOverride{MaxStderrChars: auditevent.Ptr(-1)}).Validate(); err == nil || err.Error() != "max_stderr_chars: must be >= 0, got -1" {
		t.Fatalf("Validate: %v", err)
	}
}

func TestPolicyApplyLeavesOriginal(t *testing.T) {
	ev, err := auditevent.Decode([]byte(`{"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","seq":2,"op":"exec","phase":"finish","span_id":"s","ok":true,"duration_ms":1,"stdout":"kept","data":{"bytes":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	ev.StdoutBytes = []byte("raw")
	out := auditevent.Policy{IncludeExecOutput: true, MaxStdoutChars: 2, IncludeWriteLen: false}.Apply(&ev)
	if *out.Stdout != "ra\u2026" || out.Stderr != nil || !out.Data.IsEmpty() {
		t.Fatalf("applied: stdout %q stderr %v data %s", *out.Stdout, out.Stderr, out.Data)
	}
	if *ev.Stdout != "kept" || ev.Data.String() != `{"bytes":3}` || string(ev.StdoutBytes) != "raw" {
		t.Fatal("Apply modified its input")
	}
}

// A NUL byte after the object is data after the value, as for Python's
// json.loads ("Extra data"), not the end of the text.
func TestDataRefusesWhatFollowsANUL(t *testing.T) {
	for _, in := range []string{"{\"bytes\":12}\x00{\"evil\":1}", "{\"a\":1}\x00", "{\"a\":1} \x00 "} {
		if d, err := auditevent.ParseDataString(in); err == nil {
			t.Errorf("ParseDataString(%q) = %s, want an error", in, d)
		}
		if d, err := auditevent.ParseData([]byte(in)); err == nil {
			t.Errorf("ParseData(%q) = %s, want an error", in, d)
		}
	}
}

// Span data goes through the canonical check first and the parser only
// when that fails: both must draw pydantic's line of 4,300 characters of
// integer, a minus sign included.
func TestDataIntegerLengthLimitCountsTheSign(t *testing.T) {
	nines := func(n int) string { return strings.Repeat("9", n) }
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"x":` + nines(4300) + `}`, true},
		{`{"x":-` + nines(4299) + `}`, true},
		{`{"x":-` + nines(4300) + `}`, false},
		{`{"x":` + nines(4301) + `}`, false},
	} {
		_, errS := auditevent.ParseDataString(c.in)
		_, errB := auditevent.ParseData([]byte(c.in))
		if (errS == nil) != c.ok || (errB == nil) != c.ok {
			t.Errorf("%d characters: ParseDataString %v, ParseData %v; want ok=%v", len(c.in)-7, errS, errB, c.ok)
		}
	}
}
