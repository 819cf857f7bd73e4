package redact

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// outputWindow is how many code points past the character limit exec
// output is decoded and scanned before it is cut to the limit: a secret
// that straddles the limit is seen whole (a 4096-bit RSA key in PEM is
// about 3,300 characters), and a PEM block the window itself cuts is cut
// to its end.
const outputWindow = 8192

// Output is safe_decode(raw, maxChars) with the secrets cut: the output is
// decoded up to outputWindow code points past the limit, redacted, then cut
// to maxChars with "…" when there was more. When nothing is cut the result
// is exactly safe_decode's.
func (r *Redactor) Output(raw []byte, maxChars int, c *Counts) string {
	maxChars = max(maxChars, 0)
	limit := maxChars
	if limit <= math.MaxInt-outputWindow {
		limit += outputWindow
	}
	text := auditevent.SafeDecode(raw, limit)
	more := utf8.RuneCountInString(text) > limit
	if more {
		text = strings.TrimSuffix(text, auditevent.Ellipsis)
	}
	red, _ := r.String(text, c)
	if cut, ok := firstRunes(red, maxChars); ok {
		return cut + auditevent.Ellipsis
	}
	if more {
		return red + auditevent.Ellipsis
	}
	return red
}

// firstRunes returns the first n code points of s when s has more.
func firstRunes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if i >= len(s) {
			return s, false
		}
	}
	if i >= len(s) {
		return s, false
	}
	return s[:i], true
}
