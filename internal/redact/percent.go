package redact

import "strings"

// A URL inside a query parameter is percent-encoded, once or twice:
// next=%2Flogin%3Fpassword%3Dhunter2%26user%3Dbob,
// redirect=https%3A%2F%2Falice%3As3cret%40host. The scanner reaches such a
// name as any run, followed by '%' (see plainRun); the value and the
// userinfo are cut as in their plain forms.

// pctByte decodes the escape at s[k], '%' and two hex digits or, for text
// encoded twice, "%25" and two, and gives the byte and the escape's
// length; n is 0 when there is none.
func pctByte(s string, k int) (b byte, n int) {
	if k+2 >= len(s) || s[k] != '%' || !isHex(s[k+1]) || !isHex(s[k+2]) {
		return 0, 0
	}
	if s[k+1] == '2' && s[k+2] == '5' && k+4 < len(s) && isHex(s[k+3]) && isHex(s[k+4]) {
		return unhex(s[k+3])<<4 | unhex(s[k+4]), 5
	}
	return unhex(s[k+1])<<4 | unhex(s[k+2]), 3
}

// unhex is the value of the hex digit c.
func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// encodedSlashes is the index after two encoded slashes at k ("%2F%2F").
func encodedSlashes(s string, k int) (int, bool) {
	for range 2 {
		b, n := pctByte(s, k)
		if b != '/' {
			return 0, false
		}
		k += n
	}
	return k, true
}

// encodedAfterRun handles the run s[i:j] followed by a percent escape: a
// name and its encoded '=', or a scheme and its encoded "://".
func (sc *scanner) encodedAfterRun(i, j int) int {
	b, n := pctByte(sc.s, j)
	switch b {
	case '=':
		return sc.encodedAssignment(i, j, j+n)
	case ':':
		if a, ok := encodedSlashes(sc.s, j+n); ok {
			return sc.encodedURLPassword(a)
		}
	}
	return j
}

// encodedAssignment cuts the value at v of a secret name s[i:j] whose '='
// is encoded: up to the first byte, plain or encoded, that ends a value in
// a query (endsValue), a marker or a terminal color. An encoded quote
// around the value is left out, as a plain one is.
func (sc *scanner) encodedAssignment(i, j, v int) int {
	kind, ok := sc.valueToCut(i, j)
	if !ok {
		return j
	}
	s := sc.s
	if b, n := pctByte(s, v); b == '"' || b == '\'' {
		v += n
	}
	end := v
	for end < len(s) && !endsValue(s[end]) && s[end] != '[' && s[end] != esc {
		if b, n := pctByte(s, end); n > 0 {
			if endsValue(b) {
				break
			}
			end += n
			continue
		}
		end++
	}
	return sc.cutValue(v, end, kind)
}

// encodedAuthorityEnd holds the bytes, plain or encoded, that end an
// encoded URL's authority: urlPassword's, and '&', which ends the query
// parameter the URL is encoded in.
const encodedAuthorityEnd = "/?#\"' \t\r\n<>[]&"

// encodedURLPassword cuts the password of an encoded URL's userinfo
// (user%3Apassword%40host), the authority starting at a. The authority
// ends where a plain one does, or at an encoded '/', '?', '#', '&' or a
// blank or quote.
func (sc *scanner) encodedURLPassword(a int) int {
	s := sc.s
	colon, at, atEnd := -1, -1, 0
	end := a
	for end < len(s) && strings.IndexByte(encodedAuthorityEnd, s[end]) < 0 {
		b, n := pctByte(s, end)
		if n == 0 {
			end++
			continue
		}
		if strings.IndexByte(encodedAuthorityEnd, b) >= 0 {
			break
		}
		switch {
		case b == '@':
			at, atEnd = end, end+n
		case b == ':' && colon < 0:
			colon = end + n
		}
		end += n
	}
	if at < 0 || colon < 0 || colon > at {
		return a // no password; the user may be a token the detectors know
	}
	sc.add(colon, at, KindURLPassword)
	return atEnd
}
