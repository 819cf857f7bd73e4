package redact

import "strings"

// cookieForm says which pairs of a cookie string hold cookies.
type cookieForm uint8

const (
	// cookieList: every name=value pair is a cookie (a Cookie header,
	// curl's -b and --cookie).
	cookieList cookieForm = iota
	// cookieSet: the first pair is the cookie and the rest are its
	// attributes (Set-Cookie, document.cookie =), which stay.
	cookieSet
)

// cookieHeader reports whether name is a header that holds cookies, and
// in which form.
func cookieHeader(name string) (cookieForm, bool) {
	switch {
	case len(name) != len("cookie") && len(name) != len("set-cookie"):
		return 0, false
	case strings.EqualFold(name, "cookie"):
		return cookieList, true
	case strings.EqualFold(name, "set-cookie"):
		return cookieSet, true
	}
	return 0, false
}

// isCookieName reports whether a data member name holds cookies.
func isCookieName(name string) bool {
	_, ok := cookieHeader(name)
	return ok
}

// cookieAssignment reports whether the run name, followed by '=', takes a
// cookie string: curl's --cookie=a=b, or document.cookie = "a=b; path=/",
// which sets one cookie.
func cookieAssignment(name string) (cookieForm, bool) {
	switch {
	case name == "--cookie":
		return cookieList, true
	case len(name) == len("cookie") && strings.EqualFold(name, "cookie"):
		return cookieSet, true
	}
	return 0, false
}

// isCookieFlag reports whether an argv element is curl's flag that takes a
// cookie string as its next element.
func isCookieFlag(arg string) bool { return arg == "-b" || arg == "--cookie" }

// cookieNameByte holds the bytes of a cookie name (an RFC 6265 token).
var cookieNameByte = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = strings.IndexByte(`()<>@,;:\"/[]?={}`, byte(c)) < 0
	}
	return t
}()

// cookieValueByte holds the bytes of a cookie value: RFC 6265's
// cookie-octet less the single quote, which ends a shell argument, and
// any byte from 0x80, which servers send in practice.
var cookieValueByte = func() (t [256]bool) {
	for c := 0x21; c < 0x100; c++ {
		t[c] = c != 0x7f && strings.IndexByte("\",;\\'", byte(c)) < 0
	}
	return t
}()

// cookies cuts the values of the cookie string at v and returns where
// scanning goes on: the names stay, so the trail still tells which cookies
// were sent. A string with no name=value pair at v (curl -b FILE, "cookie:
// none") is no cookie string and v is returned.
func (sc *scanner) cookies(v int, form cookieForm) int {
	if sc.probe {
		sc.hit = true
		return v
	}
	s := sc.s
	p := skipBlanks(s, v)
	closing := byte(0)
	switch {
	case p < len(s) && (s[p] == '"' || s[p] == '\''):
		p++
	case p+1 < len(s) && s[p] == '\\' && s[p+1] == '"':
		p += 2
	case p < len(s) && s[p] == '[':
		closing, p = ']', p+1 // Go prints a header map as map[Cookie:[a=b]]
	}
	next := v
	for {
		n := p
		for n < len(s) && cookieNameByte[s[n]] {
			n++
		}
		if n == p || n >= len(s) || s[n] != '=' {
			return next
		}
		lo, hi := cookieValue(s, n+1, closing)
		next = hi
		if lo < hi {
			next = max(hi, sc.cutValue(lo, hi, KindCookie))
		}
		if lo > n+1 && next < len(s) && s[next] == '"' {
			next++ // the quote that closes a quoted value
		}
		if form == cookieSet || next >= len(s) {
			return next
		}
		switch c := s[next]; {
		case c == ';' || c == ',': // a Cookie header's pairs, or several headers joined
			p = skipBlanks(s, next+1)
		case c == ' ' && closing == ']': // Go's map[Cookie:[a=b c=d]]
			p = skipBlanks(s, next)
		default:
			return next
		}
	}
}

// cookieValue is the extent of the cookie value at v: inside its quotes
// when quoted (blanks included, "abc def"), else up to the first byte no
// value holds (or closing).
func cookieValue(s string, v int, closing byte) (int, int) {
	lo := v
	if v < len(s) && s[v] == '"' {
		lo = v + 1
		// the closing quote, before the pair's end: the search stops at
		// ';' so each byte is read once
		k := lo
		for k < len(s) && s[k] != '"' && s[k] != ';' && s[k] != '\n' && s[k] != '\r' && s[k] != closing {
			k++
		}
		if k < len(s) && s[k] == '"' && (k+1 == len(s) || !cookieValueByte[s[k+1]]) {
			return lo, k // a quote a value byte follows opens the next value
		}
	}
	hi := lo
	for hi < len(s) && cookieValueByte[s[hi]] && s[hi] != closing {
		hi++
	}
	return lo, hi
}

// joinedCookies handles curl's -b with its cookie string joined to it
// (-bsid=abc, -b'sid=abc'), at the flag at i, and returns where scanning
// goes on. go test's -bench=. has the same form, so the flag is read so
// only on a line where curl runs.
func (sc *scanner) joinedCookies(i int) (int, bool) {
	s := sc.s
	if i > 0 && s[i-1] != ' ' && s[i-1] != '\t' && s[i-1] != '"' && s[i-1] != '\'' {
		return 0, false
	}
	if !joinedCookiePair(s[i:]) || !sc.curlBefore(i) {
		return 0, false
	}
	return sc.cookies(i+2, cookieList), true
}

// joinedCookiePair reports whether arg is -b with a cookie pair joined to
// it, its quote opened: -bNAME=, -b'NAME=, -b"NAME=, -b\"NAME=.
func joinedCookiePair(arg string) bool {
	if len(arg) < 3 || arg[0] != '-' || arg[1] != 'b' {
		return false
	}
	p := 2
	switch {
	case arg[p] == '"' || arg[p] == '\'':
		p++
	case arg[p] == '\\' && p+1 < len(arg) && arg[p+1] == '"':
		p += 2
	}
	n := p
	for n < len(arg) && cookieNameByte[arg[n]] && arg[n] != '\'' {
		n++
	}
	return n > p && n < len(arg) && arg[n] == '='
}

// curlBefore reports whether curl's command word starts earlier on the
// line of i. The scan asks at rising offsets, so the text is read once.
func (sc *scanner) curlBefore(i int) bool {
	if i < sc.curlTo {
		sc.curlTo, sc.curlOn = 0, false
	}
	s := sc.s
	for ; sc.curlTo < i; sc.curlTo++ {
		switch k := sc.curlTo; s[k] {
		case '\n', '\r':
			sc.curlOn = false
		case 'c':
			if strings.HasPrefix(s[k:], "curl") && (k == 0 || !wordByte[s[k-1]] && s[k-1] != '.') &&
				k+4 < len(s) && strings.IndexByte(" \t\"'", s[k+4]) >= 0 {
				sc.curlOn = true
			}
		}
	}
	return sc.curlOn
}

// isCurl reports whether an argv element runs curl.
func isCurl(arg string) bool { return arg == "curl" || strings.HasSuffix(arg, "/curl") }
