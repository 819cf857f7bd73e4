package auditevent

import (
	"slices"

	"github.com/google/uuid"
)

// parseUUID accepts the spellings pydantic's UUID type accepts from JSON:
// 32 hex digits, the hyphenated 8-4-4-4-12 form, that form in braces, or
// prefixed by "urn:uuid:"; hex digits in either case.
func parseUUID[T string | []byte](s T) (uuid.UUID, bool) {
	var u uuid.UUID
	switch {
	case len(s) == 32:
		return u, decodeHexInto(u[:], s)
	case len(s) == 36:
	case len(s) == 38 && s[0] == '{' && s[37] == '}':
		s = s[1:37]
	case len(s) == 45 && string(s[:9]) == "urn:uuid:":
		s = s[9:]
	default:
		return u, false
	}
	return parseHyphenated(s)
}

// parseHyphenated parses the 36-byte 8-4-4-4-12 form. Every span carries
// event and session ids in it, so the digits are read at fixed offsets.
func parseHyphenated[T string | []byte](s T) (uuid.UUID, bool) {
	var u uuid.UUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	var b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15 byte
	u[0], b0 = hexPair(s, 0)
	u[1], b1 = hexPair(s, 2)
	u[2], b2 = hexPair(s, 4)
	u[3], b3 = hexPair(s, 6)
	u[4], b4 = hexPair(s, 9)
	u[5], b5 = hexPair(s, 11)
	u[6], b6 = hexPair(s, 14)
	u[7], b7 = hexPair(s, 16)
	u[8], b8 = hexPair(s, 19)
	u[9], b9 = hexPair(s, 21)
	u[10], b10 = hexPair(s, 24)
	u[11], b11 = hexPair(s, 26)
	u[12], b12 = hexPair(s, 28)
	u[13], b13 = hexPair(s, 30)
	u[14], b14 = hexPair(s, 32)
	u[15], b15 = hexPair(s, 34)
	bad := b0 | b1 | b2 | b3 | b4 | b5 | b6 | b7 | b8 | b9 | b10 | b11 | b12 | b13 | b14 | b15
	return u, bad < 0x10
}

// hexPair decodes the two hex digits at s[at:at+2]; bad is 0xFF when
// either is not one.
func hexPair[T string | []byte](s T, at int) (v, bad byte) {
	hi, lo := hexValue[s[at]], hexValue[s[at+1]]
	return hi<<4 | lo, hi | lo
}

func decodeHexInto[T string | []byte](dst []byte, s T) bool {
	var bad byte
	for i := range dst {
		hi, lo := hexValue[s[2*i]], hexValue[s[2*i+1]]
		bad |= hi | lo
		dst[i] = hi<<4 | lo
	}
	return bad < 0x10
}

// hexValue maps a hex digit, in either case, to its value and any other
// byte to 0xFF: a table keeps event-id parsing free of branches.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for i, c := range []byte("0123456789abcdef") {
		t[c] = byte(i)
	}
	for i, c := range []byte("ABCDEF") {
		t[c] = byte(10 + i)
	}
	return t
}()

// appendUUID appends the canonical lowercase hyphenated form, quoted,
// without allocating (uuid.UUID.String allocates). Every event holds two,
// so the digits are written at fixed offsets straight into dst.
func appendUUID(dst []byte, u uuid.UUID) []byte {
	n := len(dst)
	dst = slices.Grow(dst, uuidQuotedLen)[:n+uuidQuotedLen]
	t := (*[uuidQuotedLen]byte)(dst[n:])
	t[0], t[9], t[14], t[19], t[24], t[37] = '"', '-', '-', '-', '-', '"'
	putHexByte(t, 1, u[0])
	putHexByte(t, 3, u[1])
	putHexByte(t, 5, u[2])
	putHexByte(t, 7, u[3])
	putHexByte(t, 10, u[4])
	putHexByte(t, 12, u[5])
	putHexByte(t, 15, u[6])
	putHexByte(t, 17, u[7])
	putHexByte(t, 20, u[8])
	putHexByte(t, 22, u[9])
	putHexByte(t, 25, u[10])
	putHexByte(t, 27, u[11])
	putHexByte(t, 29, u[12])
	putHexByte(t, 31, u[13])
	putHexByte(t, 33, u[14])
	putHexByte(t, 35, u[15])
	return dst
}

// uuidQuotedLen is the length of a quoted 8-4-4-4-12 UUID.
const uuidQuotedLen = 38

func putHexByte(t *[uuidQuotedLen]byte, at int, b byte) {
	t[at], t[at+1] = hexDigits[b>>4], hexDigits[b&0xF]
}

// ParseUUID parses any spelling the intake accepts (see Decode).
func ParseUUID(s string) (uuid.UUID, error) {
	u, ok := parseUUID(s)
	if !ok {
		return uuid.Nil, fieldErr("", "uuid_parsing", "not a UUID")
	}
	return u, nil
}
