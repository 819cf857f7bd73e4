package secretlog

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces a secret in a response excerpt.
const Redacted = "[REDACTED]"

// Redact replaces every secret in b, in each form an endpoint may echo it
// (see echoForms) and in any ASCII case, and drops a tail of b that is the
// start of one (a read limit can cut a secret in two).
func Redact(b []byte, secrets []string) []byte {
	forms := echoForms(secrets)
	for _, f := range forms {
		b = replaceFold(b, f)
	}
	lower := asciiLower(b)
	for _, f := range forms {
		// Down to minSecretPart bytes: a shorter tail (the "b" ending a
		// sentence, for a token that starts with one) says nothing.
		for n := min(len(f)-1, len(b)); n >= minSecretPart; n-- {
			if bytes.HasSuffix(lower, []byte(f[:n])) {
				b, lower = b[:len(b)-n], lower[:len(lower)-n]
				break
			}
		}
	}
	return b
}

// echoForms is each secret as it is, JSON-escaped (json_encode writes "/"
// as "\/", Go's encoder writes "<", ">", "&" as \u003c…) and
// percent-encoded, lowercased for replaceFold and longest first. A body
// that quotes a base64 token in any of these shows it as plainly.
func echoForms(secrets []string) []string {
	var forms []string
	for _, s := range secrets {
		quoted, _ := json.Marshal(s)
		for _, f := range []string{
			s,
			strings.ReplaceAll(s, "/", `\/`),
			string(quoted[1 : len(quoted)-1]),
			url.QueryEscape(s),
			url.PathEscape(s),
			everyByte(s, "%%%02x"), // percent-encoded whole
			everyByte(s, `\u%04x`), // JSON-escaped whole
			base64.StdEncoding.EncodeToString([]byte(s)),
			base64.RawStdEncoding.EncodeToString([]byte(s)),
			base64.URLEncoding.EncodeToString([]byte(s)),
			base64.RawURLEncoding.EncodeToString([]byte(s)),
		} {
			forms = append(forms, string(asciiLower([]byte(f))))
		}
	}
	// Longest first, so that a value is replaced before any part of it
	// (replacing a part first would leave the rest readable).
	slices.Sort(forms)
	forms = slices.Compact(forms)
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return forms
}

// everyByte writes each byte of s with format, as an endpoint that escapes
// everything would echo it (the match ignores case, so %4B and %4b alike).
func everyByte(s, format string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, format, s[i])
	}
	return b.String()
}

// replaceFold replaces every occurrence of lowerForm in b, compared in ASCII
// lower case (so the lengths, and the positions, of b and its lower-case
// copy agree), with Redacted.
func replaceFold(b []byte, lowerForm string) []byte {
	lower := asciiLower(b)
	var out []byte
	last := 0
	for {
		i := bytes.Index(lower[last:], []byte(lowerForm))
		if i < 0 {
			break
		}
		out = append(out, b[last:last+i]...)
		out = append(out, Redacted...)
		last += i + len(lowerForm)
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// asciiLower is a copy of b with A-Z lowered and every other byte kept.
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
