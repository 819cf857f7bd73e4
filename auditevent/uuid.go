package auditevent

import (
	"encoding/binary"
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
// so the digits are written at fixed offsets straight into dst, each group
// of up to four bytes in one store from a table of digit pairs.
func appendUUID(dst []byte, u uuid.UUID) []byte {
	n := len(dst)
	dst = slices.Grow(dst, uuidQuotedLen)[:n+uuidQuotedLen]
	t := dst[n : n+uuidQuotedLen]
	t[0], t[9], t[14], t[19], t[24], t[37] = '"', '-', '-', '-', '-', '"'
	binary.LittleEndian.PutUint64(t[1:9], hex4(u[0], u[1], u[2], u[3]))
	binary.LittleEndian.PutUint32(t[10:14], hex2(u[4], u[5]))
	binary.LittleEndian.PutUint32(t[15:19], hex2(u[6], u[7]))
	binary.LittleEndian.PutUint32(t[20:24], hex2(u[8], u[9]))
	binary.LittleEndian.PutUint64(t[25:33], hex4(u[10], u[11], u[12], u[13]))
	binary.LittleEndian.PutUint32(t[33:37], hex2(u[14], u[15]))
	return dst
}

// uuidQuotedLen is the length of a quoted 8-4-4-4-12 UUID.
const uuidQuotedLen = 38

// hexPairs[b] is b's two lowercase hex digits as a little-endian uint16:
// the high digit first in memory.
var hexPairs = func() (t [256]uint16) {
	for b := range t {
		t[b] = uint16(hexDigits[b>>4]) | uint16(hexDigits[b&0xF])<<8
	}
	return t
}()

// hex2 is the four digits of a and b, in memory order once stored
// little-endian.
func hex2(a, b byte) uint32 {
	return uint32(hexPairs[a]) | uint32(hexPairs[b])<<16
}

// hex4 is hex2 for four bytes.
func hex4(a, b, c, d byte) uint64 {
	return uint64(hex2(a, b)) | uint64(hex2(c, d))<<32
}

// ParseUUID parses any spelling the intake accepts (see Decode).
func ParseUUID(s string) (uuid.UUID, error) {
	u, ok := parseUUID(s)
	if !ok {
		return uuid.Nil, fieldErr("", "uuid_parsing", "not a UUID")
	}
	return u, nil
}
