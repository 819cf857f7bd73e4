package safetext

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	checkEscape(t, map[string]string{
		"ls -la":               "ls -la",
		"café <b>":             "café <b>",
		"\x1b[2J\x1b]0;t\x07":  `\x1b[2J\x1b]0;t\x07`,
		"a\nb\tc\rd":           `a\nb\tc\x0dd`,
		"notes\u202etxt.sh":    `notes\u202etxt.sh`,
		"\u2066x\u2069\u200f":  `\u2066x\u2069\u200f`,
		"\u0085\u009b31m":      `\u0085\u009b31m`,
		"line\u2028para\u2029": `line\u2028para\u2029`,
		"bad \xff\xfe utf8":    `bad \xff\xfe utf8`,
		"\x7f":                 `\x7f`,
	})
}

// checkEscape compares Escape of each key with its value.
func checkEscape(t *testing.T, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// A command holding the text of an escape must not look like the
// character it names: a backslash is always shown doubled.
func TestEscapeBackslash(t *testing.T) {
	checkEscape(t, map[string]string{
		`printf '\x1b'`:   `printf '\\x1b'`,
		"printf '\x1b'":   `printf '\x1b'`,
		`C:\Temp\u202e`:   `C:\\Temp\\u202e`,
		"\\\x1b":          `\\\x1b`,
		`a\\b`:            `a\\\\b`,
		`no backslash ok`: `no backslash ok`,
	})
}

// Invisible characters (Unicode category Cf, and letters drawn as nothing)
// would make two different commands look the same.
func TestEscapeFormatCharacters(t *testing.T) {
	checkEscape(t, map[string]string{
		"rm\u200b -rf":             `rm\u200b -rf`,
		"a\u200cb\u200dc":          `a\u200cb\u200dc`,
		"word\u2060joiner":         `word\u2060joiner`,
		"\ufeffbom":                `\ufeffbom`,
		"soft\u00adhyphen":         `soft\u00adhyphen`,
		"mongolian\u180e":          `mongolian\u180e`,
		"tag\U000e0041\U000e007f":  `tag\U000e0041\U000e007f`,
		"hangul\u3164filler\u115f": `hangul\u3164filler\u115f`,
		"emoji\u2764\ufe0f":        "emoji\u2764\ufe0f", // a variation selector (Mn) is visible in effect
	})
	for _, table := range []*unicode.RangeTable{unicode.Cf, unicode.Other_Default_Ignorable_Code_Point} {
		for _, rt := range table.R16 {
			for r := rune(rt.Lo); r <= rune(rt.Hi); r += rune(rt.Stride) {
				if strings.ContainsRune(Escape(string(r)), r) {
					t.Errorf("Escape(%U) keeps the invisible character", r)
				}
			}
		}
		for _, rt := range table.R32 {
			for r := rune(rt.Lo); r <= rune(rt.Hi); r += rune(rt.Stride) {
				if strings.ContainsRune(Escape(string(r)), r) {
					t.Errorf("Escape(%U) keeps the invisible character", r)
				}
			}
		}
	}
}

// unescape reads Escape's output back with Go's own string-literal
// decoder, which knows \\, \n, \t, \xNN, \uXXXX and \UXXXXXXXX.
func unescape(t *testing.T, shown string) string {
	t.Helper()
	s, err := strconv.Unquote(`"` + strings.ReplaceAll(shown, `"`, `\"`) + `"`)
	if err != nil {
		t.Fatalf("%q does not read back: %v", shown, err)
	}
	return s
}

// The escaped form is unambiguous: it reads back to exactly the text.
func TestEscapeReadsBack(t *testing.T) {
	for _, in := range escapeSeeds {
		if got := unescape(t, Escape(in)); got != in {
			t.Errorf("Escape(%q) reads back as %q", in, got)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range escapeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Escape(in)
		if got := unescape(t, out); got != in {
			t.Fatalf("Escape(%q) = %q reads back as %q", in, out, got)
		}
		for _, r := range out {
			if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) ||
				unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || r == '\u2028' || r == '\u2029' {
				t.Fatalf("Escape(%q) = %q keeps %U", in, out, r)
			}
		}
	})
}

var escapeSeeds = []string{
	"", "ls -la", `\`, `\x1b`, "\x1b", `\\x1b`, "\\\x1b", `"quoted"`, "café\u200b",
	"\xff\xfe", "\ufffd", "\U000e0041", "a\nb\tc\r", "\u202e\u2066", "\u0085", `C:\Temp\new`,
}

// EscapeCut cuts the escaped text only between escapes, never inside one.
func TestEscapeCut(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven long", 10, "eleven lo…"},
		{"ab\u00adcd", 10, `ab\u00adcd`},
		{"ab\u00adcd", 9, `ab\u00ad…`},
		{"ab\u00adcd", 8, "ab…"},
		{"ab\u00adcd", 4, "ab…"},
		{"ab\x1bcd", 7, `ab\x1b…`},
		{"ab\x1bcd", 6, "ab…"},
		{`ab\cd`, 5, `ab\\…`},
		{`ab\cd`, 4, "ab…"},
		{"\U000e0041xyz", 5, "…"},
		{"x", 1, "x"},
		{"xy", 1, "…"},
		{"xy", 0, ""},
	} {
		if got := EscapeCut(c.in, c.width); got != c.want {
			t.Errorf("EscapeCut(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

// Every cut is the escape of a whole prefix of the text, the longest that
// fits beside "…".
func TestEscapeCutAtBoundaries(t *testing.T) {
	for _, in := range escapeSeeds {
		in += "tail \x1b\u200b\\ end"
		full := Escape(in)
		for width := 1; width <= utf8.RuneCountInString(full)+1; width++ {
			got := EscapeCut(in, width)
			if utf8.RuneCountInString(full) <= width {
				if got != full {
					t.Errorf("EscapeCut(%q, %d) = %q, want it whole", in, width, got)
				}
				continue
			}
			want := "…"
			for i := range in {
				if p := Escape(in[:i]); utf8.RuneCountInString(p) <= width-1 {
					want = p + "…"
				}
			}
			if got != want {
				t.Errorf("EscapeCut(%q, %d) = %q, want %q", in, width, got, want)
			}
		}
	}
}

func TestEscapeJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"ls -la","b":"caf\u00e9 <b>"}`:          `{"a":"ls -la","b":"caf\u00e9 <b>"}`,
		`{"a":"say \"hi\" \\ \\u202e"}`:               `{"a":"say \"hi\" \\ \\u202e"}`,
		"{\"a\":\"notes\u202etxt.sh\"}":               `{"a":"notes\u202etxt.sh"}`,
		"{\"a\":\"rm\u200b\",\"b\":\"\u00ad\u2028\"}": `{"a":"rm\u200b","b":"\u00ad\u2028"}`,
		"{\"a\":\"tag\U000e0041\"}":                   `{"a":"tag\udb40\udc41"}`,
		"{\"a\":\"\x7f\u0085\"}":                      `{"a":"\u007f\u0085"}`,
		"{\n\t\"a\": 1\r\n}":                          "{\n\t\"a\": 1\r\n}",
		"{\"a\":\"bad \xff\"}":                        `{"a":"bad \xff"}`,
	} {
		if got := EscapeJSON(in); got != want {
			t.Errorf("EscapeJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

// What EscapeJSON shows of valid JSON is JSON of the same value.
func TestEscapeJSONKeepsTheValue(t *testing.T) {
	for _, in := range []string{
		"{\"command\":[\"cat\",\"notes\u202etxt.sh\",\"rm\u200b -rf\U000e0041\"]}",
		`{"command":["printf","\\x1b","\u001b"],"n":1.5}`,
		"[\"\ufeff\u2066x\u2069\", \"\u3164\"]",
		"{\"a\":1\r,\"b\":\"x\u2028\"}\r",
	} {
		var want, got any
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		shown := EscapeJSON(in)
		if err := json.Unmarshal([]byte(shown), &got); err != nil {
			t.Fatalf("EscapeJSON(%q) = %q: not JSON: %v", in, shown, err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("EscapeJSON(%q) = %q reads as %v, want %v", in, shown, got, want)
		}
		if strings.IndexFunc(shown, unsafeInJSON) >= 0 {
			t.Errorf("EscapeJSON(%q) = %q still holds a character to show", in, shown)
		}
	}
}

// Whatever EscapeJSON is given, it shows no character to hide but JSON's
// whitespace; of valid JSON it shows JSON of the same value.
func FuzzEscapeJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, in string) {
		shown := EscapeJSON(in)
		if i := strings.IndexFunc(shown, unsafeInJSON); i >= 0 {
			t.Fatalf("EscapeJSON(%q) = %q keeps %q", in, shown, shown[i:])
		}
		if strings.IndexFunc(in, mayShowInJSON) < 0 && shown != in {
			t.Fatalf("EscapeJSON(%q) = %q, with nothing to show", in, shown)
		}
		if !utf8.ValidString(in) || !json.Valid([]byte(in)) {
			return
		}
		if !json.Valid([]byte(shown)) {
			t.Fatalf("EscapeJSON(%q) = %q is not JSON", in, shown)
		}
		want, got := decodeJSON(t, in), decodeJSON(t, shown)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("EscapeJSON(%q) = %q reads as %v, want %v", in, shown, got, want)
		}
	})
}

// decodeJSON is s's value, numbers as written; the test fails if s is not
// one JSON value.
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%q is not JSON: %v", s, err)
	}
	return v
}
