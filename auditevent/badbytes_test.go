package auditevent

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDecodeNamesBadBytes: a byte that is not UTF-8 is reported as such
// with its offset (not as the Latin-1 character it would be), and a NUL
// byte is not mistaken for the end of the input.
func TestDecodeNamesBadBytes(t *testing.T) {
	for in, want := range map[string]string{
		"\xff":                        "invalid UTF-8 at byte 0",
		"  \xfe":                      "invalid UTF-8 at byte 2",
		`{"version":` + "\xff}":       "invalid UTF-8 at byte 11",
		`{"version":1,"x":"` + "\xff": "invalid UTF-8 at byte 18",
		"\x00":                        "invalid JSON at byte 0: unexpected control byte 0x00",
		`{"version":` + "\x00}":       "invalid JSON at byte 11: unexpected control byte 0x00",
		"":                            "invalid JSON at byte 0: unexpected end of input",
		`{"version":`:                 "invalid JSON at byte 11: unexpected end of input",
		"é":                           "invalid JSON at byte 0: unexpected character 'é'",
		"x":                           "invalid JSON at byte 0: unexpected character 'x'",
	} {
		var e Event
		err := DecodeOptions{}.DecodeInto([]byte(in), &e)
		if assert.Error(t, err, "%q", in) {
			assert.Contains(t, err.Error(), want, "%q", in)
			assert.NotContains(t, err.Error(), "ÿ", "%q", in)
		}
	}
}
