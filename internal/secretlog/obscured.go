package secretlog

import (
	"bytes"
	"encoding/hex"
	"strconv"
)

// minObscuredSecret is the shortest secret, counted in letters and digits,
// looked for in obscured forms. They are matched ignoring every other
// byte, so a shorter value ("prod") would withhold ordinary text.
const minObscuredSecret = 8

// obscuredEcho reports whether b holds a secret in a form an endpoint may
// echo it in that is neither plain nor percent-, JSON- or base64-encoded:
// spaced out, in UTF-16, as character references (&#83; &#x53; \x53 and
// quoted-printable =53), as hex, or as base64 broken over lines.
func obscuredEcho(b []byte, secrets []string) bool {
	letters := alnumLower(unCharRefs(b))
	digits := alnumLower(b)
	compact := withoutSpace(b)
	for _, s := range secrets {
		ls := alnumLower([]byte(s))
		if len(ls) < minObscuredSecret {
			continue
		}
		if bytes.Contains(letters, ls) || bytes.Contains(digits, []byte(hex.EncodeToString([]byte(s)))) ||
			base64Echo(compact, s) {
			return true
		}
	}
	return false
}

// alnumLower keeps b's ASCII letters and digits, lowercased.
func alnumLower(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			out = append(out, c)
		case 'A' <= c && c <= 'Z':
			out = append(out, c+'a'-'A')
		}
	}
	return out
}

// withoutSpace drops ASCII white space (line breaks in base64 included).
func withoutSpace(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			out = append(out, c)
		}
	}
	return out
}

// unCharRefs decodes the escapes of ASCII characters that name a byte by
// number: &#NN; and &#xHH; (HTML), \xHH (C), =HH (quoted-printable) and
// %HH. Everything else is kept.
func unCharRefs(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if c, n := charRef(b[i:]); n > 0 {
			out = append(out, c)
			i += n - 1
			continue
		}
		out = append(out, b[i])
	}
	return out
}

// charRef decodes an escape at the start of b: the byte it names (ASCII
// only) and its length, or 0.
func charRef(b []byte) (byte, int) {
	switch {
	case len(b) >= 3 && (b[0] == '=' || b[0] == '%') && isHex(b[1]) && isHex(b[2]):
		return unhex(b[1])<<4 | unhex(b[2]), 3
	case len(b) >= 4 && b[0] == '\\' && b[1] == 'x' && isHex(b[2]) && isHex(b[3]):
		return unhex(b[2])<<4 | unhex(b[3]), 4
	case len(b) >= 4 && b[0] == '&' && b[1] == '#':
		end := bytes.IndexByte(b[:min(len(b), 12)], ';')
		if end < 3 {
			return 0, 0
		}
		digits, base := b[2:end], 10
		if digits[0] == 'x' || digits[0] == 'X' {
			digits, base = digits[1:], 16
		}
		v, err := strconv.ParseUint(string(digits), base, 8)
		if err != nil || v >= 0x80 {
			return 0, 0
		}
		return byte(v), end + 1
	}
	return 0, 0
}
