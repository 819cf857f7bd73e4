package secretlog

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const token = "tok-9f8e7d6c5b4a"

// A secret is redacted alone, with the endpoint's password and query, and
// when a read limit cut it; and in each form an endpoint may echo it.
func TestRedactEveryEchoedForm(t *testing.T) {
	secrets := Secrets("http://u:pa55word@h/p?key=qu3ry", []string{"Bearer " + token})
	require.Equal(t, "a [REDACTED] b", string(Redact([]byte("a "+token+" b"), secrets)), "the token alone")
	require.Equal(t, "x [REDACTED] [REDACTED]", string(Redact([]byte("x pa55word qu3ry"), secrets)))
	require.Equal(t, "cut at ", string(Redact([]byte("cut at "+token[:7]), secrets)), "a token cut by the read limit")

	// Echoed in another form: JSON-escaped (json_encode writes "/" as
	// "\/"), in another case, percent-encoded; and cut after such a form.
	slashy := "Bearer tok/9f8e+7d6c=="
	secrets = Secrets("", []string{slashy})
	for _, echo := range []string{
		`{"got":"Bearer tok\/9f8e+7d6c=="}`,
		"got: bearer TOK/9F8E+7D6C==",
		"got: Bearer+tok%2F9f8e%2B7d6c%3D%3D",
	} {
		got := string(Redact([]byte(echo), secrets))
		require.NotContains(t, strings.ToLower(got), "9f8e", "%q → %q", echo, got)
		require.Contains(t, got, Redacted, "%q", echo)
	}
	// Escaped whole (every byte percent-encoded or \u-escaped) or base64:
	// forms in which no part of the token reads as itself, checked
	// against the encodings computed here.
	word := "tok/9f8e+7d6c=="
	var pct, uesc strings.Builder
	for i := 0; i < len(word); i++ {
		fmt.Fprintf(&pct, "%%%02X", word[i])
		fmt.Fprintf(&uesc, `\u%04X`, word[i])
	}
	for _, echo := range []string{
		"got " + pct.String(),
		"got " + uesc.String(),
		"got " + base64.StdEncoding.EncodeToString([]byte(slashy)),
		"got " + base64.RawURLEncoding.EncodeToString([]byte(word)),
	} {
		got := string(Redact([]byte(echo), secrets))
		require.Equal(t, "got "+Redacted, got, "%q", echo)
	}
	require.Equal(t, `{"got":"`, string(Redact([]byte(`{"got":"tok\/9f8e+`), secrets)), "a JSON-escaped token cut by the read limit")
}
