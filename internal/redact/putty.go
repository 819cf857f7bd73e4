package redact

import "strings"

// puttyHeader starts a PuTTY key file (.ppk) of version 2 or 3, before
// its version digit and ':'.
const puttyHeader = "PuTTY-User-Key-File-"

// puttyPrivate names the count of a key file's private lines, which
// follow it.
const puttyPrivate = "Private-Lines:"

// maxPuTTYHead bounds the text read from the header to the private lines:
// the public lines of the largest RSA key and a long comment fit.
const maxPuTTYHead = 8192

// maxPuTTYField bounds a header field's line (a comment included).
const maxPuTTYField = 1024

// puttyKey handles the run s[i:j], as long as a header and its version
// digit, when it is a key file's header, and reports whether it was: the
// lines below it are the file's fields ("Name: value") and public lines
// (base64) up to Private-Lines: N, whose N base64 lines below it are cut;
// a file cut short, as far as they go. The lines may end in "\n" or
// "\r\n", plain or escaped (JSON text), and be indented (a YAML block
// scalar, a heredoc).
func (sc *scanner) puttyKey(i, j int) (int, bool) {
	s := sc.s
	if !strings.HasPrefix(s[i:], puttyHeader) || s[j-1] != '2' && s[j-1] != '3' || j >= len(s) || s[j] != ':' {
		return 0, false
	}
	k := nextLine(s, j, maxPuTTYField)
	for k >= 0 && k-i < maxPuTTYHead {
		k = skipBlanks(s, k)
		if strings.HasPrefix(s[k:], puttyPrivate) {
			return sc.puttyPrivateLines(k + len(puttyPrivate))
		}
		if strings.HasPrefix(s[k:], puttyHeader) {
			return 0, false // another file: each line is read for one header
		}
		if e := runEnd(s, k); e > k && e < len(s) && s[e] == ':' {
			k = nextLine(s, e, maxPuTTYField) // Encryption:, Comment:, Argon2-Salt: …
			continue
		}
		e := k
		for e < len(s) && base64Byte(s[e]) {
			e++
		}
		if e == k || lineBreakLen(s, e) == 0 {
			return 0, false // neither a field nor a public line: no key file
		}
		k = e + lineBreakLen(s, e)
	}
	return 0, false
}

// puttyPrivateLines cuts the private lines below "Private-Lines:", whose
// count is at v.
func (sc *scanner) puttyPrivateLines(v int) (int, bool) {
	s := sc.s
	v = skipBlanks(s, v)
	e := v
	for e < len(s) && e-v < 4 && isDigit(s[e]) {
		e++
	}
	n := 0
	for _, c := range []byte(s[v:e]) {
		n = n*10 + int(c-'0')
	}
	lb := lineBreakLen(s, e)
	if n == 0 || lb == 0 {
		return 0, false
	}
	lo := skipBlanks(s, e+lb)
	hi := lo
	for k := lo; n > 0; n-- {
		k = skipBlanks(s, k)
		end := k
		for end < len(s) && base64Byte(s[end]) {
			end++
		}
		if end == k {
			break
		}
		hi = end
		if k = end + lineBreakLen(s, end); k == end {
			break
		}
	}
	if hi == lo {
		return 0, false
	}
	sc.add(lo, hi, KindPuTTYPrivateKey)
	return hi, true
}

// nextLine is the start of the line after the one that k is in, whose
// rest holds at most limit bytes, or -1.
func nextLine(s string, k, limit int) int {
	for e := k; e < len(s) && e-k <= limit; e++ {
		if n := lineBreakLen(s, e); n > 0 {
			return e + n
		}
	}
	return -1
}

// lineBreakLen is the length of the line break at k: "\n" or "\r\n",
// plain or escaped as in JSON text; 0 when there is none.
func lineBreakLen(s string, k int) int {
	switch {
	case k >= len(s):
		return 0
	case s[k] == '\n':
		return 1
	case strings.HasPrefix(s[k:], "\r\n"):
		return 2
	case strings.HasPrefix(s[k:], `\n`):
		return 2
	case strings.HasPrefix(s[k:], `\r\n`):
		return 4
	}
	return 0
}
