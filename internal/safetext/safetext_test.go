package safetext

import "testing"

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
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
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}
