package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// markerPrefix starts every marker: [REDACTED:kind] or, with a hash key,
// [REDACTED:kind:8 hex digits].
const markerPrefix = "[REDACTED:"

// hashLen is the hex digits of the keyed hash a marker carries: enough to
// tell the secrets of one trail apart, too few to test guesses offline
// without the key anyway.
const hashLen = 8

// appendMarker appends the marker for secret of kind k.
func appendMarker(dst []byte, k Kind, secret string, hashKey []byte) []byte {
	dst = append(dst, markerPrefix...)
	dst = append(dst, kindNames[k]...)
	if hashKey != nil {
		m := hmac.New(sha256.New, hashKey)
		m.Write([]byte(secret))
		var sum [sha256.Size]byte
		dst = append(dst, ':')
		dst = hex.AppendEncode(dst, m.Sum(sum[:0])[:hashLen/2])
	}
	return append(dst, ']')
}

// markerEnd returns the index after the marker at s[i], or i+1 when s[i]
// starts none.
func markerEnd(s string, i int) int {
	if end, ok := markerAt(s, i); ok {
		return end
	}
	return i + 1
}

// markerAt reports whether a marker starts at s[i] and where it ends.
func markerAt(s string, i int) (int, bool) {
	if len(s)-i < len(markerPrefix)+2 || s[i:i+len(markerPrefix)] != markerPrefix {
		return 0, false
	}
	k := i + len(markerPrefix)
	start := k
	for k < len(s) && (isLower(s[k]) || s[k] == '_') {
		k++
	}
	if k == start || k >= len(s) {
		return 0, false
	}
	if s[k] == ':' {
		h := k + 1
		for k = h; k < len(s) && k-h < hashLen && (isDigit(s[k]) || s[k] >= 'a' && s[k] <= 'f'); k++ {
		}
		if k-h != hashLen || k >= len(s) {
			return 0, false
		}
	}
	if s[k] != ']' {
		return 0, false
	}
	return k + 1, true
}

// MaxMarkerLen is the length of the longest marker. Every cut is at least
// one byte, so redacting a text makes it at most this many times longer.
func MaxMarkerLen() int {
	n := 0
	for _, k := range kindNames {
		n = max(n, len(k))
	}
	return len(markerPrefix) + n + 1 + hashLen + len("]")
}
