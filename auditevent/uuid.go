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
	if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	ok := decodeHexInto(u[0:4], s[0:8]) && decodeHexInto(u[4:6], s[9:13]) &&
		decodeHexInto(u[6:8], s[14:18]) && decodeHexInto(u[8:10], s[19:23]) &&
		decodeHexInto(u[10:16], s[24:36])
	return u, ok
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
