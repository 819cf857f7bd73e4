package secretlog

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// base64Token is a token with base64's "/", "+" and "=" in it.
const base64Token = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY=="

// pythonQuote is urllib.parse.quote(s) for a base64 token: "/" kept.
func pythonQuote(s string) string { return strings.NewReplacer("+", "%2B", "=", "%3D").Replace(s) }

// Forms Redact does not know: the secret escaped in part (Python's
// urllib.parse.quote keeps "/", a hand-rolled escaper picks any byte, a
// JSON encoder escapes one letter), or base64 of the secret after other
// bytes. The excerpt is withheld whole; ordinary bodies are not.
func TestEchoInAnUnknownFormIsWithheld(t *testing.T) {
	tok := base64Token
	secrets := Secrets("", []string{"Bearer " + tok})
	quoted := pythonQuote(tok)
	for name, echo := range map[string]string{
		"quote, keeping /":       "you sent " + quoted,
		"one byte escaped":       "you sent " + strings.Replace(tok, "M", "%4D", 1),
		"one letter \\u-escaped": `{"sent":"` + strings.Replace(tok, "U", `\u0055`, 1) + `"}`,
		"both, mixed":            "sent " + strings.Replace(strings.Replace(tok, "M", "%4d", 1), "U", `\u0055`, 1),
		"base64 after 1 byte":    "sent " + base64.StdEncoding.EncodeToString([]byte("x:"+tok)),
		"base64 after 2 bytes":   "sent " + base64.URLEncoding.EncodeToString([]byte("ab"+tok+"cd")),
		"percent-encoded base64": "sent " + url.QueryEscape(base64.StdEncoding.EncodeToString([]byte("u:"+tok))),
	} {
		t.Run(name, func(t *testing.T) {
			assert.True(t, Echoes(Redact([]byte(echo), secrets), secrets), "%q", echo)
		})
	}
	for _, plain := range []string{
		"invalid event: field seq missing",
		`{"error":"rate limited","retry_after":5}`,
		"100% of %41 lines",
		base64.StdEncoding.EncodeToString([]byte("an unrelated payload of some length")),
	} {
		assert.False(t, Echoes(Redact([]byte(plain), secrets), secrets), "%q", plain)
	}
}

// Forms an endpoint may echo a header value in that hide it from a byte
// match: the excerpt is withheld whole. Short values are not looked for
// this way, and ordinary bodies are shown.
func TestEchoInAnObscuredFormIsWithheld(t *testing.T) {
	secrets := Secrets("", []string{"Bearer SECRET123", "SECRETKEY456", "prod"})
	utf16 := func(s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			b.WriteByte(c)
			b.WriteByte(0)
		}
		return b.String()
	}
	perChar := func(s, format string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, format, c)
		}
		return b.String()
	}
	lined := base64.StdEncoding.EncodeToString([]byte("Key: SECRETKEY456;"))
	for name, echo := range map[string]string{
		"hex":                    "echo " + hex.EncodeToString([]byte("Bearer SECRET123")),
		"hex of the key, spaced": "key=" + perChar("SECRETKEY456", "%02X "),
		"UTF-16LE":               "got " + utf16("Bearer SECRET123"),
		"spaced letters":         "got S E C R E T 1 2 3",
		"quoted-printable":       "got " + perChar("SECRET123", "=%02X"),
		"HTML decimal":           "got " + perChar("SECRETKEY456", "&#%d;"),
		"HTML hex":               "got " + perChar("SECRETKEY456", "&#x%x;"),
		"C escapes":              "got " + perChar("SECRET123", `\x%02x`),
		"base64 over lines":      lined[:8] + "\n" + lined[8:16] + " " + lined[16:],
	} {
		t.Run(name, func(t *testing.T) {
			assert.True(t, Echoes(Redact([]byte(echo), secrets), secrets), "%q", echo)
		})
	}
	for _, plain := range []string{
		"request 6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b failed at line 12",
		`{"error":"quota exceeded","detail":"see https://example.com/docs#limits"}`,
		"the product line is down", // "prod" is too short to look for obscured
		"&#60;html&#62; =20 \\x41 %41",
	} {
		assert.False(t, Echoes(Redact([]byte(plain), secrets), secrets), "%q", plain)
	}
}
