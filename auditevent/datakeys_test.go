package auditevent_test

import (
	"strings"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// Each byte that is not UTF-8 is written U+FFFD, so two keys that differ
// only in such bytes (two file names in a Latin-1 directory) would be one
// key twice, and every reader of the line keeps one of the values: an
// entry of the caller's data lost without a word. MarshalData refuses them,
// at any depth and for any string-keyed map type.
func TestMarshalDataRefusesKeysThatWriteAlike(t *testing.T) {
	requireRefused(t, "U+FFFD", map[string]map[string]any{
		"top":      {"caf\xe9": 1, "caf\xe8": 2},
		"nested":   {"files": map[string]any{"caf\xe9.txt": 1, "caf\xe8.txt": 2}},
		"typed":    {"files": map[string]int{"\xff": 1, "\xfe": 2}},
		"replaced": {"\xff": 1, "\ufffd": 2},
	})
}

// Keys are sorted as they are written, by code point after the
// replacement: "\xc0" is written U+FFFD, after "é".
func TestMarshalDataSortsKeysAsWritten(t *testing.T) {
	d, err := auditevent.MarshalData(map[string]any{"\xc0": 1, "é": 2, "caf\xe9": 3})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"caf\ufffd":3,"\u00e9":2,"\ufffd":1}`
	if d.String() != want {
		t.Fatalf("got  %s\nwant %s", d, want)
	}
}

// Bytes are written as the text they hold, as the reference's pydantic
// model writes a bytes value (its default ser_json_bytes "utf8"): base64
// would hide a credential in them from the collector's redaction.
func TestMarshalDataWritesBytesAsText(t *testing.T) {
	type blob []byte
	d, err := auditevent.MarshalData(map[string]any{
		"b": []byte("password=hunter2 caf\u00e9"), "named": blob("x"), "nil": []byte(nil),
		"in": map[string][]byte{"k": []byte("v")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b":"password=hunter2 caf\u00e9","in":{"k":"v"},"named":"x","nil":null}`
	if d.String() != want {
		t.Fatalf("got  %s\nwant %s", d, want)
	}
}

// Bytes that are not UTF-8 (a digest, a compressed blob) hold no text:
// the reference's pydantic refuses them ("invalid utf-8"), and writing
// each bad byte as U+FFFD would keep none of the value, without a word.
// MarshalData refuses them, naming the key, at any depth.
func TestMarshalDataRefusesBytesThatAreNotUTF8(t *testing.T) {
	digest := []byte{0x9f, 0x86, 0xd0, 0x81, 0x88, 0x4c, 0x7d, 0x65}
	requireRefused(t, "UTF-8", map[string]map[string]any{
		"top":    {"sha256": digest},
		"torn":   {"b": []byte("password=hunter2\xe2\x82")},
		"nested": {"files": map[string]any{"a.bin": digest}},
		"typed":  {"files": map[string][]byte{"a.bin": digest}},
		"list":   {"parts": []any{[]byte("ok"), digest}},
	})
}

// Keys are in code point order, as Python's sort_keys puts them, not in
// the order of the UTF-16 units they are escaped as: U+FFFF comes before
// U+1F600, whose escape starts \ud83d. So also on the path for keys with
// bytes that are not UTF-8.
func TestMarshalDataSortsNonBMPKeysByCodePoint(t *testing.T) {
	for name, tc := range map[string]struct {
		data map[string]any
		want string
	}{
		// json.dumps({'\uffff':1,'\U0001F600':2,'\ue000':3}, sort_keys=True)
		"valid":    {map[string]any{"\uffff": 1, "😀": 2, "\ue000": 3}, `{"\ue000":3,"\uffff":1,"\ud83d\ude00":2}`},
		"replaced": {map[string]any{"\uffff": 1, "😀": 2, "\xff": 3}, `{"\ufffd":3,"\uffff":1,"\ud83d\ude00":2}`},
	} {
		d, err := auditevent.MarshalData(tc.data)
		if err != nil {
			t.Fatal(err)
		}
		if d.String() != tc.want {
			t.Errorf("%s: got %s, want %s", name, d, tc.want)
		}
		if p, err := auditevent.ParseData(d.Bytes()); err != nil || !p.Equal(d) {
			t.Errorf("%s: parsed again as %s (%v)", name, p, err)
		}
	}
}

// requireRefused checks that MarshalData refuses each case with an error
// that says why.
func requireRefused(t *testing.T, why string, cases map[string]map[string]any) {
	t.Helper()
	for name, data := range cases {
		d, err := auditevent.MarshalData(data)
		if err == nil {
			t.Errorf("%s: accepted as %s", name, d)
			continue
		}
		if !strings.Contains(err.Error(), why) {
			t.Errorf("%s: error does not say why: %v", name, err)
		}
	}
}
