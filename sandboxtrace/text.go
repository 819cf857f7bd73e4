package sandboxtrace

import (
	"strings"
	"unicode/utf8"
)

// validText is s with each byte that is not UTF-8 replaced by U+FFFD, as the
// canonical encoder writes such a byte. OTLP's protobuf refuses a string that
// is not UTF-8, and one such string (an OS error quoting a path that is not
// UTF-8) would lose the whole export batch it is in.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
