package secretlog

import (
	"bytes"
	"encoding/base64"
)

// Withheld replaces a whole response excerpt that still echoes a
// secret after Redact: a form Redact does not know (part percent-encoded,
// part JSON-escaped, base64 of the secret inside other bytes) is caught
// here, and the excerpt is dropped rather than shown.
const Withheld = "[response body withheld: it echoes a secret in a form not redacted]"

// Echoes reports whether b holds a secret (at least minSecretPart
// bytes; see Secrets) once percent-escapes and JSON escapes are decoded,
// in either order and in any ASCII case, or holds the part of a secret's
// base64 that does not depend on the bytes around it, at any alignment.
func Echoes(b []byte, secrets []string) bool {
	pb, jb := unPercent(b), unJSON(b)
	views := [][]byte{b, pb, jb, unPercent(jb), unJSON(pb)}
	for i, v := range views {
		views[i] = asciiLower(v) // after decoding: %4D is "M"
	}
	for _, s := range secrets {
		ls := asciiLower([]byte(s))
		for _, v := range views {
			if bytes.Contains(v, ls) {
				return true
			}
		}
		if base64Echo(b, s) || base64Echo(pb, s) {
			return true
		}
	}
	return obscuredEcho(b, secrets)
}

// base64Echo reports whether b holds the middle of s's base64 in the
// standard or URL alphabet after 0, 1 or 2 other bytes: the characters
// that encode only bytes of s, whatever comes before and after it.
func base64Echo(b []byte, s string) bool {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := range 3 {
			full := enc.EncodeToString(append(make([]byte, k), s...))
			from, to := (4*k+2)/3, 4*(k+len(s))/3
			if to-from >= 2*minSecretPart && bytes.Contains(b, []byte(full[from:to])) {
				return true
			}
		}
	}
	return false
}

// unPercent decodes every valid %XX in b and keeps everything else.
func unPercent(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '%' && i+2 < len(b) && isHex(b[i+1]) && isHex(b[i+2]) {
			out = append(out, unhex(b[i+1])<<4|unhex(b[i+2]))
			i += 2
			continue
		}
		out = append(out, b[i])
	}
	return out
}

// unJSON decodes \uXXXX escapes of bytes below 0x80 and "\/" in b and
// keeps everything else.
func unJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\\' && i+5 < len(b) && b[i+1] == 'u' && b[i+2] == '0' && b[i+3] == '0' && isHex(b[i+4]) && isHex(b[i+5]) && unhex(b[i+4]) < 8:
			out = append(out, unhex(b[i+4])<<4|unhex(b[i+5]))
			i += 5
		case b[i] == '\\' && i+1 < len(b) && b[i+1] == '/':
			out = append(out, '/')
			i++
		default:
			out = append(out, b[i])
		}
	}
	return out
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
