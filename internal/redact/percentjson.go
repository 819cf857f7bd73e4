package redact

// JSON and headers inside a percent-encoded query or form body: a GraphQL
// GET request's variables=%7B%22password%22%3A%22hunter2%22%7D, an OAuth
// state blob, a form field password%3A%20hunter2. A name before an
// encoded quote or colon is judged decoded, and its value is cut where the
// plain form's is: a quoted JSON name's (quotedName), a name's before ':'
// at a line's start (colonAfterName) or as an object's member.

// pctBefore decodes the escape that ends just before k, as pctByte would
// read it from its '%'; n is 0 when there is none. Encoded twice, the
// escape ends in "%25" and the two digits (%2522): a '5' three bytes back
// says to look further.
func pctBefore(s string, k int) (b byte, n int) {
	for n = 3; n <= 7 && k >= n; n += 2 {
		if s[k-n] == '%' {
			if b, m := pctByte(s, k-n); m == n {
				return b, n
			}
			return 0, 0
		}
		if s[k-n] != '5' || k < n+2 || s[k-n-1] != '2' {
			return 0, 0
		}
	}
	return 0, 0
}

// skipBlanksBack is where the blanks (plain, a form's '+' or encoded)
// that end at k start; quotes too, when quotes is set.
func skipBlanksBack(s string, k int, quotes bool) int {
	for k > 0 {
		c := s[k-1]
		if c == ' ' || c == '\t' || c == '+' || quotes && (c == '"' || c == '\'') {
			k--
			continue
		}
		b, n := pctBefore(s, k)
		if n == 0 || b != ' ' && b != '\t' && (!quotes || b != '"' && b != '\'') {
			break
		}
		k -= n
	}
	return k
}

// encodedLineStart reports whether the name at i starts a line of the
// encoded text, blanks and quotes before it aside, as lineStart does for
// plain text: at the string's start, after a line break, plain or
// encoded, or after the '=', '?' or '&', plain or encoded, that starts a
// query parameter's value, the decoded text.
func (sc *scanner) encodedLineStart(i int) bool {
	if sc.probe {
		return true // a string of data text may start anywhere
	}
	k := skipBlanksBack(sc.s, i, true)
	if k == 0 {
		return true
	}
	switch byteBefore(sc.s, k) {
	case '\n', '\r', '=', '?', '&':
		return true
	}
	return false
}

// encodedMemberStart reports whether the name or quote at i starts a
// member of an object literal or an argument list, as memberStart does:
// it follows '{', ',' or '(', plain or encoded, after blanks.
func encodedMemberStart(s string, i int) bool {
	k := skipBlanksBack(s, i, false)
	if k == 0 {
		return false
	}
	c := byteBefore(s, k)
	return c == '{' || c == ',' || c == '('
}

// byteBefore is the byte, plain or encoded, that ends at k (k > 0).
func byteBefore(s string, k int) byte {
	if b, n := pctBefore(s, k); n > 0 {
		return b
	}
	return s[k-1]
}

// encodedQuoteAt reports the quote, plain or encoded, at v and its length.
func encodedQuoteAt(s string, v int) (byte, int) {
	if v < len(s) && (s[v] == '"' || s[v] == '\'') {
		return s[v], 1
	}
	if b, n := pctByte(s, v); b == '"' || b == '\'' {
		return b, n
	}
	return 0, 0
}

// encodedClosingQuote is where the quoted value at v ends: at the quote q
// encoded as the opening one was (n bytes), unless an odd number of
// backslashes, plain or encoded, escape it; without one, where a plain
// value in a query ends (a blank, quote, '&', ';' or ','), or at a marker
// or a terminal color. A plain opening quote is closed by a plain quote.
func encodedClosingQuote(s string, v int, q byte, n int) int {
	backslashes := 0
	for k := v; k < len(s); {
		c, w := s[k], 1
		if n == 1 && c == q && backslashes%2 == 0 {
			return k
		}
		if endsValue(c) || c == '[' || c == esc {
			return k
		}
		if c == '%' {
			if b, m := pctByte(s, k); m > 0 {
				if b == q && m == n && backslashes%2 == 0 {
					return k
				}
				c, w = b, m
			}
		}
		if c == '\\' {
			backslashes++
		} else {
			backslashes = 0
		}
		k += w
	}
	return len(s)
}

// encodedQuotedExtent is the value at v when it starts with a quote,
// plain or encoded: the text inside it, and true.
func encodedQuotedExtent(s string, v int) (int, int, bool) {
	q, n := encodedQuoteAt(s, v)
	if n == 0 {
		return 0, 0, false
	}
	return v + n, encodedClosingQuote(s, v+n, q, n), true
}

// encodedScalarEnd is where an unquoted value at v of an encoded JSON
// member ends: where a value in a query ends, or at an encoded '}' or ']'
// after a JSON literal or number ({"pin":1234}), as valueExtent does.
func encodedScalarEnd(s string, v int) int {
	end := encodedValueEnd(s, v)
	for k := v; k < end; k++ {
		if b, n := pctByte(s, k); n > 0 {
			if (b == '}' || b == ']') && k > v && jsonScalar(s[v:k]) {
				return k
			}
			k += n - 1
		}
	}
	return end
}

// encodedQuotedName handles a name (decoded, starting at i and ending at
// k) inside a quote encoded as the one at k (q, n bytes), as quotedName
// does a plain one: "password": "x" in encoded JSON text. The colon may be
// plain too, as encodeURI leaves it.
func (sc *scanner) encodedQuotedName(name string, i, k int, q byte, n int) int {
	s := sc.s
	open, on := pctBefore(s, i)
	if open != q || on != n {
		return k
	}
	c := skipEncodedBlanks(s, k+n)
	if c >= len(s) {
		return k
	}
	b, cn := s[c], 1
	if b == '%' {
		b, cn = pctByte(s, c)
	}
	if b != ':' {
		return k
	}
	v := skipEncodedBlanks(s, c+cn)
	if _, qn := encodedQuoteAt(s, v); qn == 0 && !sc.encodedLineStart(i-on) && !encodedMemberStart(s, i-on) {
		return k // a word in prose: the "pageToken": A page token ...
	}
	if end, ok := sc.encodedHeader(name, v); ok {
		return end
	}
	kind, ok := sc.nameToCut(name)
	if !ok && !isAuthName(name) {
		return k
	}
	lo, hi, quoted := encodedQuotedExtent(s, v)
	if !quoted {
		lo, hi = v, encodedScalarEnd(s, v)
	}
	if !ok {
		return sc.encodedBasicValue(k, lo, hi)
	}
	return sc.cutValue(lo, hi, kind)
}

// encodedBasicValue cuts the value s[lo:hi] of an auth name (ending at
// k) when, decoded, it is a Basic credential, as basicValue does a plain
// one's; a probe only notes that it may be one.
func (sc *scanner) encodedBasicValue(k, lo, hi int) int {
	if sc.probe {
		sc.hit = true
		return k
	}
	if hi-lo > 3*maxBasicCredential {
		return k
	}
	s := sc.s
	d := make([]byte, 0, hi-lo)
	for p := lo; p < hi; {
		if b, n := pctByte(s, p); n > 0 {
			d, p = append(d, b), p+n
			continue
		}
		d, p = append(d, s[p]), p+1
	}
	if !basicCredential(string(d)) {
		return k
	}
	sc.add(lo, hi, KindBasicAuth)
	return hi
}

// encodedLineEnd is where the rest of an encoded line at v ends: where
// the value of the parameter the text is encoded in ends (a plain blank,
// quote, '&', ';' or ','), at an encoded line break or '&' (the next
// parameter of an encoded query), at an encoded quote when one opened the
// line (quoted), or at a marker or a terminal color.
func encodedLineEnd(s string, v int, quoted bool) int {
	for k := v; k < len(s); k++ {
		c := s[k]
		if endsValue(c) || c == '[' || c == esc {
			return k
		}
		if b, n := pctByte(s, k); n > 0 {
			if b == '\n' || b == '\r' || b == '&' || quoted && (b == '"' || b == '\'') {
				return k
			}
			k += n - 1
		}
	}
	return len(s)
}

// encodedColon handles a name (decoded, starting at i and ending at k)
// before an encoded ':' whose value starts at v, as colonAfterName does a
// plain one: at a line's start (password%3A%20hunter2 as a parameter's
// value), the rest of the line or a quoted value; as an object's member
// ({login(password%3A%20%22x%22)} in a GraphQL query) or before ":="
// (Go's apiKey := "x"), a quoted value.
func (sc *scanner) encodedColon(name string, i, k, v int) int {
	s := sc.s
	// the name first: most names say no secret, at one look
	kind, ok := sc.nameToCut(name)
	if !ok && !isAuthName(name) {
		return k
	}
	v, member := encodedEquals(s, v) // ":=" in Go
	line := sc.encodedLineStart(i)
	member = member || encodedMemberStart(s, i)
	if !line && !member {
		return k
	}
	v = skipEncodedBlanks(s, v)
	lo, hi, quoted := encodedQuotedExtent(s, v)
	if !quoted {
		if !line {
			return k // {password: getpass()}: code
		}
		open, _ := pctBefore(s, i) // "X-Api-Key: x" quoted whole
		lo, hi = v, encodedLineEnd(s, v, open == '"' || open == '\'')
	}
	if !ok {
		return sc.encodedBasicValue(k, lo, hi)
	}
	return sc.cutValue(lo, hi, kind)
}
