package safetext

import "testing"

// A variation selector changes how the character before it looks; with
// none that it can change (after ASCII text, another selector, or at the
// start) it is drawn as nothing, and a run of them can carry a hidden
// payload (one byte a selector after an emoji): those are shown as
// escapes, the ones that do their work are left as they are.
func TestEscapeVariationSelectors(t *testing.T) {
	checkEscape(t, map[string]string{
		"emoji\u2764\ufe0f":                          "emoji\u2764\ufe0f",
		"keycap 1\ufe0f\u20e3 #\ufe0f":               "keycap 1\ufe0f\u20e3 #\ufe0f",
		"zero 0\ufe00":                               "zero 0\ufe00",
		"kanji \u845b\U000e0100":                     "kanji \u845b\U000e0100",
		"ls\ufe0f -la":                               `ls\ufe0f -la`,
		"\ufe0fstart":                                `\ufe0fstart`,
		"q=\U0001F600\U000e0100\U000e0101\U000e0102": `q=` + "\U0001F600" + `\U000e0100\U000e0101\U000e0102`,
		"x\u2764\ufe0f\ufe01\ufe02":                  "x\u2764\ufe0f" + `\ufe01\ufe02`,
		"\x1b\ufe0f":                                 `\x1b\ufe0f`,
		"mongolian a\u180b":                          `mongolian a\u180b`,
	})
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"ls\ufe0f -la", 9, `ls\ufe0f…`},
		{"ls\ufe0f -la", 8, "ls…"},
		{"q=\U0001F600\U000e0100\U000e0101", 15, "q=\U0001F600" + `\U000e0100…`},
		{"ok \u2764\ufe0f!", 6, "ok \u2764\ufe0f!"},
	} {
		if got := EscapeCut(c.in, c.width); got != c.want {
			t.Errorf("EscapeCut(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

func TestEscapeJSONVariationSelectors(t *testing.T) {
	for in, want := range map[string]string{
		"{\"a\":\"ls\ufe0f\"}":                 `{"a":"ls\ufe0f"}`,
		"[\"\U0001F600\U000e0100\U000e0101\"]": "[\"\U0001F600" + `\udb40\udd00\udb40\udd01"]`,
		"{\"a\":\"\u2764\ufe0f\"}":             "{\"a\":\"\u2764\ufe0f\"}",
	} {
		if got := EscapeJSON(in); got != want {
			t.Errorf("EscapeJSON(%q) = %q, want %q", in, got, want)
		}
	}
}
