package redact

import "strings"

// A URL inside a query parameter is percent-encoded, once, twice or three
// times: next=%2Flogin%3Fpassword%3Dhunter2%26user%3Dbob,
// redirect=https%3A%2F%2Falice%3As3cret%40host. The scanner reaches such a
// name as any run followed by '%' (see plainRun), or at a '%' that encodes
// its first letter (%70assword); the name is judged decoded, and the
// value, the userinfo, an Authorization or cookie header and a SAS
// signature are cut as in their plain forms.

// maxEncodedName bounds a name whose encoded bytes are decoded; a longer
// one says no secret.
const maxEncodedName = 64

// pctByte decodes the escape at s[k], '%' and two hex digits or, for text
// encoded twice or three times, "%25" or "%2525" and two, and gives the
// byte and the escape's length; n is 0 when there is none.
func pctByte(s string, k int) (b byte, n int) {
	if k+2 >= len(s) || s[k] != '%' || !isHex(s[k+1]) || !isHex(s[k+2]) {
		return 0, 0
	}
	n = 3
	for level := 0; level < 2 && s[k+n-2] == '2' && s[k+n-1] == '5' && k+n+1 < len(s) && isHex(s[k+n]) && isHex(s[k+n+1]); level++ {
		n += 2 // "%25" encodes the '%' of the escape after it
	}
	return unhex(s[k+n-2])<<4 | unhex(s[k+n-1]), n
}

// encodedName is the name at i with its encoded word bytes decoded
// (%70assword, pass%77ord), and its end. A name over maxEncodedName
// decodes to "", which says nothing.
func encodedName(s string, i int) (string, int) {
	var buf [maxEncodedName]byte
	n, k := 0, i
	for k < len(s) {
		c, w := s[k], 1
		if !wordByte[c] {
			if c, w = pctByte(s, k); w == 0 || !wordByte[c] {
				break
			}
		}
		if n == len(buf) {
			return "", k
		}
		buf[n] = c
		n, k = n+1, k+w
	}
	return string(buf[:n]), k
}

// mayHaveEncodedName reports whether s holds an escape that the
// prefilter's trigrams do not see: an encoded word byte, which may spell
// a secret name (%70assword), or the encoded '=' of a SAS version
// (sv%3D).
func mayHaveEncodedName(s string) bool {
	for i := 0; ; {
		k := strings.IndexByte(s[i:], '%')
		if k < 0 {
			return false
		}
		k += i
		if b, n := pctByte(s, k); n > 0 && (wordByte[b] || b == '=' && k >= 2 && strings.EqualFold(s[k-2:k], "sv")) {
			return true
		}
		i = k + 1
	}
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

// encodedAfterRun handles the run s[i:j] (empty at a '%' that encodes a
// name's first byte) followed by a percent escape: a name, decoded when
// the escape is one of its bytes, and its '=', encoded ':' or closing
// encoded quote; or a scheme and its encoded "://". It returns the name's
// end when nothing is cut.
func (sc *scanner) encodedAfterRun(i, j int) int {
	s := sc.s
	name, k := s[i:j], j
	b, n := pctByte(s, j)
	decoded := wordByte[b] && n > 0
	if decoded {
		name, k = encodedName(s, i)
		if b, n = pctByte(s, k); k < len(s) && s[k] == '=' {
			b, n = '=', 1
		}
	}
	switch b {
	case '=':
		if end, ok := sc.encodedSAS(name, i, k+n); ok {
			return end
		}
		return sc.encodedAssignment(name, k, k+n)
	case ':':
		if !decoded {
			if a, ok := encodedSlashes(s, k+n); ok {
				return sc.encodedURLPassword(a)
			}
		}
		if end, ok := sc.encodedHeader(name, k+n); ok {
			return end
		}
		return sc.encodedColon(name, i, k, k+n)
	case '"', '\'':
		return sc.encodedQuotedName(name, i, k, b, n)
	case ' ', '\t':
		return sc.encodedBlankEquals(name, i, k)
	}
	return k
}

// encodedBlankEquals handles a name (decoded, from i to k) before encoded
// blanks and an '=', plain or encoded (password%20%3D%20x, a form body's
// "password = x"), as blankAfterName does a plain one: at the start of the
// decoded text, the rest of its line or a quoted value; elsewhere (code),
// a quoted value only. "==" is a comparison.
func (sc *scanner) encodedBlankEquals(name string, i, k int) int {
	s := sc.s
	v, ok := encodedEquals(s, skipEncodedBlanks(s, k))
	if !ok {
		return k
	}
	if _, twice := encodedEquals(s, v); twice {
		return k
	}
	kind, ok := sc.nameToCut(name)
	if !ok {
		return k
	}
	v = skipEncodedBlanks(s, v)
	lo, hi, quoted := encodedQuotedExtent(s, v)
	if !quoted {
		if !sc.encodedLineStart(i) {
			return k // x = getpass(): code
		}
		lo, hi = v, encodedLineEnd(s, v, false)
	}
	return sc.cutValue(lo, hi, kind)
}

// encodedEquals gives the index after an '=', plain or encoded, at k.
func encodedEquals(s string, k int) (int, bool) {
	if k < len(s) && s[k] == '=' {
		return k + 1, true
	}
	if b, n := pctByte(s, k); b == '=' {
		return k + n, true
	}
	return k, false
}

// encodedAssignment cuts the value at v of a secret name whose '=' ends at
// v, plain or encoded, in an encoded query; it returns j when the name
// says no secret. An encoded quote around the value is left out, as a
// plain one is.
func (sc *scanner) encodedAssignment(name string, j, v int) int {
	kind, ok := sc.nameToCut(name)
	if !ok {
		return j
	}
	if b, n := pctByte(sc.s, v); b == '"' || b == '\'' {
		v += n
	}
	return sc.cutValue(v, encodedValueEnd(sc.s, v), kind)
}

// encodedValueEnd is where the value at v in an encoded query ends: at the
// first byte, plain or encoded, that ends a value in a query (endsValue),
// or a marker or a terminal color.
func encodedValueEnd(s string, v int) int {
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
	return end
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

// encodedSAS cuts the signature of an Azure SAS in an encoded URL
// (%26sig%3D…, with sv%3D earlier in its query), as sasSignature does in
// a plain one: name is "sig", starting at i, and its value starts at v.
func (sc *scanner) encodedSAS(name string, i, v int) (int, bool) {
	if name != "sig" || !encodedSASQuery(sc.s, i) {
		return 0, false
	}
	return sc.cutValue(v, encodedValueEnd(sc.s, v), KindToken), true
}

// encodedSASQuery reports whether the parameter at i follows an '&',
// plain or encoded, in a query with sv= before it, read decoded.
func encodedSASQuery(s string, i int) bool {
	// the '&' first: "%26", "%2526" and "%252526" end in 26
	if i == 0 || s[i-1] != '&' && (i < 3 || s[i-2:i] != "26" || s[i-3] != '%' && s[i-3] != '5') {
		return false
	}
	q := s[max(0, i-maxSASQuery):i]
	d := make([]byte, 0, len(q))
	for k := 0; k < len(q); {
		if b, n := pctByte(q, k); n > 0 {
			d, k = append(d, b), k+n
			continue
		}
		d, k = append(d, q[k]), k+1
	}
	return len(d) > 0 && d[len(d)-1] == '&' && sasVersionBefore(string(d), len(d))
}

// encodedHeader handles a header name whose value, after an encoded ':',
// holds credentials in a form of its own (Authorization, Cookie,
// Set-Cookie), and reports whether name is one.
func (sc *scanner) encodedHeader(name string, v int) (int, bool) {
	if !isAuthorization(name) {
		form, ok := cookieHeader(name)
		if !ok {
			return 0, false
		}
		return sc.encodedCookies(v, form), true
	}
	return sc.encodedAuthorization(v), true
}

// skipEncodedBlanks skips the blanks at v: plain, a form's '+' or encoded.
func skipEncodedBlanks(s string, v int) int {
	for v < len(s) {
		if s[v] == ' ' || s[v] == '+' {
			v++
			continue
		}
		b, n := pctByte(s, v)
		if n == 0 || b != ' ' && b != '\t' {
			break
		}
		v += n
	}
	return v
}

// skipEncodedQuote skips an encoded double quote at v, one that opens or
// closes a quoted value (a cookie's, an Authorization header's).
func skipEncodedQuote(s string, v int) int {
	if b, n := pctByte(s, v); b == '"' {
		return v + n
	}
	return v
}

// encodedCredentialEnd is the end of the credential at v, of token68
// bytes, plain or encoded; a plain '+' is a form's blank.
func encodedCredentialEnd(s string, v int) int {
	for v < len(s) {
		if c := s[v]; token68[c] && c != '+' {
			v++
			continue
		}
		b, n := pctByte(s, v)
		if n == 0 || !token68[b] {
			break
		}
		v += n
	}
	return v
}

// encodedAuthorization cuts the credentials of an encoded Authorization
// header's value at v, as authorization does a plain one's: after a
// scheme word, the credential, or for any scheme but Bearer, Basic and
// token the rest of the value; without one, the single token.
func (sc *scanner) encodedAuthorization(v int) int {
	if sc.probe {
		sc.hit = true
		return v
	}
	s := sc.s
	v = skipEncodedQuote(s, skipEncodedBlanks(s, v))
	w := encodedCredentialEnd(s, v)
	c := skipEncodedBlanks(s, w)
	e := encodedCredentialEnd(s, c)
	scheme := s[v:w]
	switch kind, ok := schemeKind(scheme); {
	case w == v:
		return v
	case c == w || e == c: // one word: the credential itself
		if isScheme(scheme) {
			return w
		}
		return sc.cutValue(v, w, KindAuthorization)
	case ok:
		sc.add(c, e, kind)
	default: // Digest, AWS4-HMAC-SHA256 ...: to the value's plain end
		for e < len(s) && !endsValue(s[e]) && s[e] != '[' {
			e++
		}
		sc.add(c, e, KindAuthorization)
	}
	return e
}

// encodedCookies cuts the values of an encoded cookie string at v (the
// value of an encoded Cookie or Set-Cookie header), as cookies does a
// plain one's: pairs apart by ';' or ',', plain or encoded, each name
// before an '=', plain or encoded, kept.
func (sc *scanner) encodedCookies(v int, form cookieForm) int {
	if sc.probe {
		sc.hit = true
		return v
	}
	s := sc.s
	next := v
	for p := skipEncodedBlanks(s, v); ; {
		lo, ok := encodedCookieName(s, p)
		if !ok {
			return next
		}
		at := lo
		lo = skipEncodedQuote(s, lo)
		quoted := lo > at
		hi := encodedValueEnd(s, lo)
		next = hi
		if lo < hi {
			next = max(hi, sc.cutValue(lo, hi, KindCookie))
		}
		if quoted && next < len(s) {
			next = skipEncodedQuote(s, next) // the quote that closes it
		}
		if form == cookieSet || next >= len(s) {
			return next
		}
		b, n := s[next], 1
		if b == '%' {
			b, n = pctByte(s, next)
		}
		if b != ';' && b != ',' {
			return next
		}
		p = skipEncodedBlanks(s, next+n)
	}
}

// encodedCookieName reads the cookie name at p, its bytes plain or
// encoded, and gives where its value starts, after the '=' that ends it.
func encodedCookieName(s string, p int) (int, bool) {
	for k := p; k < len(s); {
		c, w := s[k], 1
		if c == '%' {
			if c, w = pctByte(s, k); w == 0 {
				return 0, false
			}
		}
		switch {
		case c == '=':
			return k + w, k > p
		case !cookieNameByte[c]:
			return 0, false
		}
		k += w
	}
	return 0, false
}
