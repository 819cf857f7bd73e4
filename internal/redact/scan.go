package redact

import "strings"

// span is one cut: s[lo:hi] holds a secret of kind.
type span struct {
	lo, hi int
	kind   Kind
}

// wordByte holds the bytes of a token run: letters, digits, '_' and '-'.
// Every fixed-prefix format starts a run, and names are runs.
var wordByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = isAlnum(b) || b == '_' || b == '-'
	}
	return t
}()

// token68 holds the bytes of an HTTP credential (RFC 7235 token68) and of
// the base64 forms secrets take.
var token68 = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = isAlnum(b) || strings.IndexByte("-._~+/=", b) >= 0
	}
	return t
}()

// minFormatRun is the shortest run a fixed-prefix detector can match
// (gitlab's gldt- plus 20); shorter runs skip the prefix checks.
const minFormatRun = 16

// scanner finds the built-in detectors' cuts in one string, left to right,
// in one pass: each detector is triggered by a run of word bytes or by one
// punctuation byte, and looks at a bounded neighbourhood, except PEM blocks
// and values to the end of a line, which are cut whole and skipped.
type scanner struct {
	s     string
	keys  []string // the user's names, normalized
	spans []span
	// rescanTo ends the call value being scanned again for tokens in its
	// arguments. A call inside it whose value runs past maxNestedCall is
	// not scanned a third time, so that nested calls on one unbroken run
	// stay linear.
	rescanTo int
	// curlTo ends the text read for curl's command word, and curlOn says
	// whether one starts on the line at curlTo (see curlBefore).
	curlTo int
	curlOn bool
	// tool is the command whose flags the scan is in, as far as toolTo
	// (see toolAt); toolMid says its command has a word already.
	tool    tool
	toolTo  int
	toolMid bool
	// setEnd ends the last word "set" the scan passed (see afterSet).
	setEnd int
	// shell: the string is a shell line, so a NAME=value at its start is
	// not an argv element's whole value (see startsString).
	shell bool
	// probe: only report whether a detector might cut anything, looser
	// than scan (see Redactor.mayCut); hit is the answer.
	probe, hit bool
	// ats is what atAfter searched last.
	ats atSearch
}

func (sc *scanner) add(lo, hi int, k Kind) {
	if hi > lo {
		sc.hit = true
		if !sc.probe {
			sc.spans = append(sc.spans, span{lo, hi, k})
		}
	}
}

func (sc *scanner) scan() {
	s := sc.s
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case wordByte[c]:
			// the test before the call keeps most words from paying for it
			if i > 0 && (s[i-1] == '\\' || s[i-1] == '%') {
				if k := sc.afterEscape(i); k > 0 {
					i += k // \n, \u00e9, %3D: the word starts after the escape
					continue
				}
			}
			j := i + 1
			for j < len(s) && wordByte[s[j]] {
				j++
			}
			if plainRun(s, i, j) {
				i = j
				continue
			}
			i = sc.run(i, j)
		case c == '[':
			end := markerEnd(s, i)
			if end == i+1 && i > 0 && s[i-1] == esc {
				end = csiEnd(s, end) // a terminal color: the word starts after it
			}
			i = end
			continue
		case c == '"' && sc.probe:
			if i+1 < len(s) {
				switch s[i+1] {
				case '-':
					sc.probeFlag(i + 1)
				case ':':
					sc.probeName(i)
				case 's':
					sc.probeConfigSet(i)
				}
			}
			i++
		case c == ':' && strings.HasPrefix(s[i:], "://"):
			i = sc.urlPassword(i + 3)
		default:
			i++
			continue
		}
		// Only the detectors above find anything: a probe stops at its
		// first hit.
		if sc.probe && sc.hit {
			return
		}
	}
}

// plainRun reports whether run would pass over the run s[i:j] without a
// look: too short for a format, no flag, no JWT or Bearer start, and not
// followed by what makes it a name, plain or percent-encoded. Most words
// of most text are plain.
func plainRun(s string, i, j int) bool {
	n := j - i
	if n >= minFormatRun || s[i] == '-' || n == 6 || (s[i] == 'e' && n >= 10) {
		return false
	}
	if j >= len(s) {
		return true
	}
	switch s[j] {
	case '=', ':', ' ', '\t':
		return false
	case '"', '\'':
		return colonAfter(s, j+1) < 0
	case '>':
		return i == 0 || s[i-1] != '<'
	case '.':
		return !dottedPrefix(s, i, j)
	case '\\':
		return j+1 >= len(s) || s[j+1] != '"'
	}
	// an escape may encode '=' (see encodedAfterRun); looked at there, so
	// that this stays a leaf without a frame
	return s[j] != '%'
}

// afterEscape handles a word at i after a backslash or a '%': it gives
// the length of an escape that the word starts after (escapeLen), or of
// what a name whose letter the '%' encodes (%70assword) covers, past the
// cut of its value.
func (sc *scanner) afterEscape(i int) int {
	if b, n := pctByte(sc.s, i-1); n > 0 && wordByte[b] {
		return sc.encodedAfterRun(i-1, i-1) - i
	}
	return escapeLen(sc.s, i)
}

// colonAfter is the index after a ':' at k, blanks before it skipped
// ("name" : value), or -1.
func colonAfter(s string, k int) int {
	k = skipBlanks(s, k)
	if k < len(s) && s[k] == ':' {
		return k + 1
	}
	return -1
}

// esc starts ANSI terminal sequences (ESC [ 32 m).
const esc = 0x1b

// csiEnd is the index after the ANSI control sequence whose parameters
// start at i (after ESC [): parameter and intermediate bytes, then one
// final byte.
func csiEnd(s string, i int) int {
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// escapeLen is the length of the escape at s[i] when a backslash before it
// escapes it (\n, \t, \u00e9 in JSON text; \x22 or \042 for ASCII
// punctuation or a blank in a web server's log, a Python bytes repr or
// echo -e), or of the two hex digits after a '%' that encode ASCII
// punctuation or a blank (%3D, %22, %20 in a URL-encoded query or form):
// the word that follows starts after it.
func escapeLen(s string, i int) int {
	if i == 0 {
		return 0
	}
	if s[i-1] == '%' {
		n := 0 // %253D, %25253D: a query encoded twice or three times
		for n < 4 && i+n+1 < len(s) && s[i+n] == '2' && s[i+n+1] == '5' && hexPunctLen(s, i+n+2) > 0 {
			n += 2
		}
		return n + hexPunctLen(s, i+n)
	}
	if s[i-1] != '\\' || !oddBackslashes(s, i) {
		return 0
	}
	switch s[i] {
	case 'n', 'r', 't', 'b', 'f':
		return 1
	case 'u':
		if i+5 <= len(s) && isHex(s[i+1]) && isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) {
			return 5
		}
	case 'x':
		if hexPunctLen(s, i+1) > 0 {
			return 3
		}
	case '0', '1':
		if i+2 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && !wordByte[(s[i]-'0')<<6|(s[i+1]-'0')<<3|(s[i+2]-'0')] {
			return 3
		}
	}
	return 0
}

// hexPunctLen is 2 when s[i:i+2] are the hex digits of an escaped byte that
// no word holds. Only ASCII counts, so the digits start with 0 to 7 and a
// word after a bare '%' (50%dapi…) is not taken for one.
func hexPunctLen(s string, i int) int {
	if i+1 >= len(s) || s[i] < '0' || s[i] > '7' || !isHex(s[i+1]) {
		return 0
	}
	if wordByte[(s[i]-'0')<<4|unhex(s[i+1])] {
		return 0
	}
	return 2
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// oddBackslashes reports whether the backslashes just before s[i] are odd
// in number: the last one escapes s[i] ("\\n" is a backslash, then n).
func oddBackslashes(s string, i int) bool {
	n := 0
	for k := i - 1; k >= 0 && s[k] == '\\'; k-- {
		n++
	}
	return n%2 == 1
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// run handles the run s[i:j] and returns where scanning goes on.
func (sc *scanner) run(i, j int) int {
	s := sc.s
	if j-i >= minFormatRun || s[i] == 'e' || s[i] == '-' {
		if end, k, ok := formatAt(s, i, j); ok {
			sc.add(i, end, k)
			return end
		}
		if s[i] == 'P' && j-i == len(puttyHeader)+1 {
			if end, ok := sc.puttyKey(i, j); ok {
				return end
			}
		}
	}
	if p := j - len(pemBegin); p > i && strings.HasSuffix(s[i:j], pemBegin) {
		// a BEGIN line joined to the word before it (`cat notes id_rsa`,
		// notes without a final newline): '-' is a word byte
		if end, k, ok := pemAt(s, p); ok {
			sc.add(p, end, k)
			return end
		}
	}
	if j-i == 6 && strings.EqualFold(s[i:j], "bearer") {
		return sc.bareBearer(j)
	}
	if s[i] == '-' && j-i >= 2 && s[i+1] == 'b' {
		if end, ok := sc.joinedCookies(i); ok {
			return end
		}
	}
	if j-i == len("set") && s[i:j] == "set" {
		sc.setEnd = j
	}
	if s[i] == '-' && j-i >= 2 && (toolFlagLetter(s[i+1]) || j-i == len("--user") && s[i:j] == "--user") {
		if end, ok := sc.toolFlag(i, j); ok {
			return end
		}
	}
	if j >= len(s) {
		return j
	}
	switch s[j] {
	case '.':
		// a token whose prefix holds a dot (hvs., SG., dp.)
		if dottedPrefix(s, i, j) {
			if end, k, ok := formatAt(s, i, j); ok {
				sc.add(i, end, k)
				return end
			}
		}
	case '=':
		if j+1 < len(s) && s[j+1] == '=' {
			return j + 2
		}
		if form, ok := cookieAssignment(s[i:j]); ok {
			return sc.cookies(j+1, form)
		}
		if end, ok := sc.sasSignature(i, j, j+1); ok {
			return end
		}
		// a dotted name is no shell variable (git -c "user.password=a b"),
		// and the argv element it starts is none of a shell's script
		// (["git", "-c", "user.password=a b"])
		d := dottedStart(s, i)
		if openingQuote(s, d) != 0 && !sc.startsString(i) && (d < i || !opensScript(s, d-1)) {
			if end, ok := sc.quotedAssignment(i, j, d-1); ok {
				return end
			}
		}
		return sc.assignment(i, j, j+1, sc.startsString(i) || d < i && strings.TrimLeft(s[:d], "-") == "")
	case ':':
		return sc.colonAfterName(i, j)
	case '"', '\'':
		// a quoted name, "password": "x" in JSON or YAML text; a probe
		// looks at a data object's member names whole (probeName)
		if v := colonAfter(s, j+1); v > 0 && i > 0 && s[i-1] == s[j] && (!sc.probe || s[j] != '"') {
			return sc.quotedName(i, j, v)
		}
	case '>':
		// an XML element, <password>x</password> (Maven's settings.xml)
		if i > 0 && s[i-1] == '<' {
			return sc.xmlElement(i, j)
		}
	case '\\':
		// an escaped quoted name, \"password\":\"x\" in JSON text inside a
		// JSON string (a secret store's value)
		if j+1 < len(s) && s[j+1] == '"' && i >= 2 && s[i-1] == '"' && s[i-2] == '\\' {
			if v := colonAfter(s, j+2); v > 0 {
				return sc.quotedName(i, j, v)
			}
		}
	case ' ', '\t':
		return sc.blankAfterName(i, j)
	}
	if s[j] == '%' {
		return sc.encodedAfterRun(i, j) // outside the switch, as in plainRun
	}
	return j
}

// colonAfterName handles the run s[i:j] followed by ':': a header, a YAML
// key or a properties name, when it starts its line or a quoted argument.
func (sc *scanner) colonAfterName(i, j int) int {
	s := sc.s
	if strings.HasPrefix(s[j:], "://") {
		return j
	}
	if end, ok := sc.pgpassLine(i, j); ok {
		return end
	}
	if end, ok := sc.credentialHeader(s[i:j], j+1); ok {
		return end
	}
	if j+1 < len(s) && s[j+1] == '=' {
		return sc.colonEquals(i, j, j+2)
	}
	if q := openingQuote(s, i); q != 0 {
		return sc.quotedHeader(i, j, q)
	}
	if escapedLineStart(s, dottedStart(s, i)) {
		return sc.escapedLineValue(i, j, j+1)
	}
	if sc.lineStart(dottedStart(s, i)) {
		return sc.assignment(i, j, j+1, true)
	}
	if memberStart(s, i) {
		return sc.codeAssignment(i, j, j+1) // {password: "x"}
	}
	return j
}

// escapedLineStart reports whether the run at i follows an escaped line
// break, blanks aside: a header in a Python bytes repr of a request
// (http.client's "send: b'...\r\nX-Api-Key: v\r\n'") or a line of JSON text.
func escapedLineStart(s string, i int) bool {
	k := blanksBefore(s, i)
	return k >= 2 && s[k-1] == 'n' && s[k-2] == '\\' && oddBackslashes(s, k-1)
}

// escapedLineValue cuts the value at v of the name s[i:j] after an escaped
// line break, to the next escaped or plain line break or unescaped quote:
// the rest of the repr or JSON string is other lines.
func (sc *scanner) escapedLineValue(i, j, v int) int {
	kind, ok := sc.valueToCut(i, j)
	if !ok {
		return j
	}
	lo := skipBlanks(sc.s, v)
	hi := lo
	for hi < len(sc.s) {
		c := sc.s[hi]
		if c == '\n' || c == '\r' || (c == '"' || c == '\'') && !oddBackslashes(sc.s, hi) {
			break
		}
		if strings.HasPrefix(sc.s[hi:], markerPrefix) {
			break
		}
		if (c == 'r' || c == 'n') && hi > lo && sc.s[hi-1] == '\\' && oddBackslashes(sc.s, hi) {
			hi--
			break
		}
		hi++
	}
	return sc.cutValue(lo, hi, kind)
}

// blankAfterName handles the run s[i:j] followed by a blank: a flag and
// its value, an INI name before '=', or a .netrc password.
func (sc *scanner) blankAfterName(i, j int) int {
	s := sc.s
	if s[i] == '-' {
		if isCookieFlag(s[i:j]) && !sc.toolAt(i).ownsB() {
			return sc.cookies(j, cookieList)
		}
		return sc.flagValue(i, j)
	}
	k := skipBlanks(s, j)
	if k+1 < len(s) && s[k] == '=' && s[k+1] != '=' {
		if form, ok := cookieAssignment(s[i:j]); ok {
			return sc.cookies(k+1, form) // document.cookie = "a=b"
		}
		if sc.lineStart(dottedStart(s, i)) {
			return sc.assignment(i, j, k+1, true) // INI: aws_secret_access_key = X
		}
		return sc.codeAssignment(i, j, k+1) // const apiKey = "x"
	}
	if k+1 < len(s) && s[k] == ':' && s[k+1] == '=' {
		return sc.colonEquals(i, j, k+2)
	}
	if netrcPassword(s, i, j) || sc.afterSet(i) && hasSecretStem(s[i:j]) && configSetBefore(s, i) {
		return sc.flagValue(i, j)
	}
	return j
}

// openingQuote is the quote that opens a string just before the run at i
// (after a blank or '='), or 0: "X-Api-Key: v" as a shell argument.
func openingQuote(s string, i int) byte {
	if i == 0 || (s[i-1] != '"' && s[i-1] != '\'') {
		return 0
	}
	if i > 1 && strings.IndexByte(" \t\n=", s[i-2]) < 0 {
		return 0
	}
	return s[i-1]
}

// quotedHeader handles a header "Name: value" quoted by q on a shell line:
// the value ends at the closing quote.
func (sc *scanner) quotedHeader(i, j int, q byte) int {
	kind, ok := sc.valueToCut(i, j)
	if !ok {
		return j
	}
	v := skipBlanks(sc.s, j+1)
	// the closing quote first, then a line break or marker before it: each
	// is looked for only as far as the value goes
	end := closingQuote(sc.s, v, q)
	if end < 0 {
		end = len(sc.s)
	}
	end = lineEnd(sc.s[:end], v)
	return sc.cutValue(v, end, kind)
}

// quotedAssignment handles NAME=value quoted by the quote at qi as one
// argument (docker run -e "DB_PASSWORD=a b", set -x's + export 'TOKEN=a
// b'): the value, a passphrase with blanks in it, ends at the closing
// quote, or before at a '&', ';' or ',' or a blank that parts it from the
// next pair, a line break or a marker. It reports whether the name says
// secret and is so quoted: ssh's remote command is a shell line (ssh host
// "API_KEY=x ./deploy.sh"), whose value ends at a blank.
func (sc *scanner) quotedAssignment(i, j, qi int) (int, bool) {
	kind, ok := sc.valueToCut(i, j)
	if !ok || sshCommandAt(sc.s, qi) {
		return 0, false
	}
	s, v, q := sc.s, j+1, sc.s[qi]
	end := v
	for end < len(s) && s[end] != q && strings.IndexByte("&;,\r\n", s[end]) < 0 && !strings.HasPrefix(s[end:], markerPrefix) {
		if (s[end] == ' ' || s[end] == '\t') && pairAt(s, end+1) {
			break
		}
		end++
	}
	if end < len(s) && s[end] == q && oddBackslashes(s, end) {
		return 0, false // an escaped quote: shell quoting this scan does not follow
	}
	switch {
	case end == v:
		return end, true // "token=" + tok: no value
	case s[v] == '"' || s[v] == '\'':
		return 0, false // a value quoted on its own: assignment reads it
	}
	if w := strings.IndexAny(s[v:end], " \t"); w > 0 && (!plausibleValue(s[v:v+w]) || passSource(s[v:v+w])) {
		return 0, false // "PASSWORD=$DB_PASSWORD is set": a reference, then prose
	}
	return sc.cutValue(v, end, kind), true
}

// pairAt reports whether a NAME= (a dotted one too) starts at k: the next
// pair after a blank (logfmt's msg="token=… user=bob").
func pairAt(s string, k int) bool {
	e := runEnd(s, k)
	if e == k {
		return false
	}
	e = dottedEnd(s, e)
	return e < len(s) && s[e] == '='
}

// maxScriptFlag bounds the flag read back before a quote (-c, -lc, -euxc).
const maxScriptFlag = 8

// opensScript reports whether the quote at q opens the script of a
// shell's -c (bash -c "PGPASSWORD=x psql -h db"): a shell line, not one
// argument, so its NAME=value ends at a blank and the command stays.
func opensScript(s string, q int) bool {
	e := blanksBefore(s, q)
	k := e
	for k > 0 && e-k < maxScriptFlag && !isSpace(s[k-1]) {
		k--
	}
	return e < q && (k == 0 || isSpace(s[k-1])) && scriptFlag(s[k:e]) && commandAfter(s, k, "git") < 0
}

// maxCommandRead bounds the text read back from an argument for the
// command it belongs to.
const maxCommandRead = 256

// commandAfter is where the arguments of name start when the command that
// the argument at a belongs to runs it: a word before a on its line, after
// the last ';', '|', '&' or '(', is name or a path ending in it (ssh -p
// 2222 host "…", git -C repo -c "…"); -1 when it does not. A quote before
// a in the command, or a command longer than maxCommandRead, says it does
// not: the scan does not follow shell quoting, and stops at the last
// argument's quote, so that each byte is read back once.
func commandAfter(s string, a int, name string) int {
	b := a
	for ; b > 0 && strings.IndexByte("\n\r;|&(", s[b-1]) < 0; b-- {
		if a-b >= maxCommandRead || s[b-1] == '"' || s[b-1] == '\'' || s[b-1] == '`' {
			return -1
		}
	}
	for k := skipBlanks(s, b); k < a; k = skipBlanks(s, k) {
		e := k
		for e < a && s[e] != ' ' && s[e] != '\t' {
			e++
		}
		if w := s[k:e]; strings.HasSuffix(w, name) && (len(w) == len(name) || w[len(w)-len(name)-1] == '/') {
			return e
		}
		k = e
	}
	return -1
}

// sshArgFlags are ssh's flags that take the next word as their argument.
const sshArgFlags = "BbcDEeFIiJLlmOopQRSWw"

// sshCommandAt reports whether the quote at q opens ssh's remote command:
// ssh runs, and its arguments before q are flags (and their arguments)
// and one word, the host. After more words (ssh host docker run -e
// "A=b c") the quote is an argument of theirs.
func sshCommandAt(s string, q int) bool {
	k := commandAfter(s, q, "ssh")
	if k < 0 {
		return false
	}
	hosts, skip := 0, false
	for w := range strings.FieldsSeq(s[k:q]) {
		switch {
		case skip:
			skip = false
		case len(w) > 1 && w[0] == '-':
			skip = len(w) == 2 && strings.IndexByte(sshArgFlags, w[1]) >= 0
		default:
			hosts++
		}
	}
	return hosts == 1
}

// dottedStart is where the dotted name that the run at i ends starts
// (spring.datasource.password): a properties key starts its line there.
func dottedStart(s string, i int) int {
	for i > 1 && s[i-1] == '.' && wordByte[s[i-2]] {
		i = runStart(s, i-1)
	}
	return i
}

// runStart is where the run of word bytes that ends at j starts.
func runStart(s string, j int) int {
	for j > 0 && wordByte[s[j-1]] {
		j--
	}
	return j
}

// xmlElement handles the element <name> (s[i:j]): its text is the value
// when the next tag closes it. A <password> placeholder in usage text
// closes nothing and is not cut.
func (sc *scanner) xmlElement(i, j int) int {
	kind, ok := sc.valueToCut(i, j)
	if !ok {
		return j
	}
	s, v := sc.s, j+1
	end := strings.IndexByte(s[v:], '<')
	if end < 0 {
		return j
	}
	end += v
	if c := end + 2 + (j - i); c >= len(s) || s[end+1] != '/' || s[end+2:c] != s[i:j] || s[c] != '>' {
		return j
	}
	return sc.cutValue(v, end, kind)
}

// quotedName handles a quoted name s[i:j] and its value at v.
func (sc *scanner) quotedName(i, j, v int) int {
	if !sc.quotedValue(v) && !sc.lineStart(i) && !memberStart(sc.s, i-1) {
		return j // a word in prose: the "pageToken": A page token ...
	}
	if end, ok := sc.credentialHeader(sc.s[i:j], v); ok {
		return end
	}
	return sc.assignment(i, j, v, false)
}

// quotedValue reports whether the value at v (after blanks) starts with a
// quote, an escaped one included.
func (sc *scanner) quotedValue(v int) bool {
	s := sc.s
	v = skipBlanks(s, v)
	return v < len(s) && (s[v] == '"' || s[v] == '\'' || s[v] == '\\')
}

// credentialHeader handles a header name whose value holds credentials in
// a form of its own (Authorization, Cookie, Set-Cookie), its value at v,
// and reports whether name is one.
func (sc *scanner) credentialHeader(name string, v int) (int, bool) {
	if isAuthorization(name) {
		return sc.authorization(v), true
	}
	if form, ok := cookieHeader(name); ok {
		return sc.cookies(v, form), true
	}
	return 0, false
}

// maxNetrcToken bounds the words read back from a .netrc password.
const maxNetrcToken = 256

// netrcPassword reports whether the run s[i:j] is the password keyword of a
// .netrc entry: "password" after "machine HOST" or "login USER", on one
// line or over several.
func netrcPassword(s string, i, j int) bool {
	if s[i:j] != "password" {
		return false
	}
	k := i
	for t := 0; t < 2; t++ {
		for k > 0 && isSpace(s[k-1]) {
			k--
		}
		e := k
		for k > 0 && !isSpace(s[k-1]) && e-k < maxNetrcToken {
			k--
		}
		switch tok := s[k:e]; {
		case tok == "" || strings.ContainsAny(tok[len(tok)-1:], ":,.;"):
			return false // a sentence: "login failed: password expired"
		case t == 1:
			return tok == "login" || tok == "machine"
		}
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// startsString reports whether the run at i begins the string, flag dashes
// aside: an argv element or an env entry, whose value is the rest of the
// line. A shell line splits its words at blanks: NAME=value at its start
// is a prefix assignment before a command.
func (sc *scanner) startsString(i int) bool {
	if sc.shell && i == 0 {
		return false
	}
	for k := 0; k < i; k++ {
		if sc.s[k] != '-' {
			return false
		}
	}
	return true
}

// lineStart reports whether the run at i begins its line, after blanks, a
// list dash, a quote, grep's file:12: prefix or curl -v's "> " and "< ": a
// header or a YAML key, not a word in a sentence ("failed to read token:
// ...").
func (sc *scanner) lineStart(i int) bool {
	if sc.probe {
		return true // a string of data text may start anywhere
	}
	for k := i - 1; k >= 0; k-- {
		switch sc.s[k] {
		case '\n':
			return true
		case ':':
			return grepPrefix(sc.s, k)
		case '>', '<':
			return curlVerbosePrefix(sc.s, k)
		case '-':
			if grepPrefix(sc.s, k) {
				return true
			}
		case ' ', '\t', '"', '\'':
		default:
			return false
		}
	}
	return true
}

// curlVerbosePrefix reports whether s[k] is the '>' or '<' that curl -v
// puts, with a blank, before each request or response header it prints at
// the start of a line.
func curlVerbosePrefix(s string, k int) bool {
	return (k == 0 || s[k-1] == '\n') && k+1 < len(s) && s[k+1] == ' '
}

// maxGrepPath bounds the file name read back from a grep prefix.
const maxGrepPath = 1024

// grepPrefix reports whether s[k] ends a prefix grep puts before a line
// it prints, the line's start: path:, path:12: or, for a context line,
// path-12-.
func grepPrefix(s string, k int) bool {
	sep, j := s[k], k
	for j > 0 && isDigit(s[j-1]) {
		j--
	}
	switch {
	case j < k && j > 0 && s[j-1] == sep:
		j-- // path:12: or path-12-
	case sep != ':':
		return false
	}
	p := j
	for p > 0 && j-p < maxGrepPath && !isSpace(s[p-1]) && s[p-1] != ':' {
		p--
	}
	return p < j && (p == 0 || s[p-1] == '\n')
}

// secretName reports the kind a name says its value is.
func (sc *scanner) secretName(name string) (Kind, bool) {
	for _, k := range sc.keys {
		if equalNormalized(name, k) {
			return KindCustomKey, true
		}
	}
	return classifyName(name)
}

// assignment handles name (s[i:j]) followed by '=' or ':' with its value at
// v. toEOL: the value is the rest of the line (or of a quoted value).
func (sc *scanner) assignment(i, j, v int, toEOL bool) int {
	kind, ok := sc.valueToCut(i, j)
	if !ok {
		if isAuthName(sc.s[i:j]) {
			return sc.basicValue(j, v, toEOL)
		}
		return j
	}
	start := skipBlanks(sc.s, v)
	lo, hi := valueExtent(sc.s, start, toEOL)
	if toEOL && isBlockIndicator(sc.s[lo:hi]) {
		lo, hi = blockExtent(sc.s, i, hi)
	}
	if lo == start && sc.callValue(lo, hi) {
		if start < sc.rescanTo && hi-start > maxNestedCall {
			return hi
		}
		// password = getpass(): scanning goes on in the call's arguments,
		// which may hold a token in a known format
		sc.rescanTo = max(sc.rescanTo, hi)
		return start
	}
	if lo == start && isCodeValue(sc.s[lo:hi]) {
		return hi // token = nil, Password: cfg.Password,
	}
	return sc.cutValue(lo, hi, kind)
}

// maxCallTail bounds how far past a marker callValue looks for the end of
// a call's line.
const maxCallTail = 4096

// maxNestedCall bounds the value of a call inside a call's arguments that
// is scanned again: each such value is read once per call before it.
const maxNestedCall = 512

// callValue reports whether the value s[lo:hi] is a call. A value that a
// marker ends is a call whose arguments held a token, cut by an earlier
// pass: it is read on to its line's end, within maxCallTail.
func (sc *scanner) callValue(lo, hi int) bool {
	s := sc.s
	if isCallValue(s[lo:hi]) {
		return true
	}
	if lo == hi || !strings.HasPrefix(s[hi:], markerPrefix) {
		return false // a call starts with its name
	}
	tail := s[hi:min(len(s), hi+maxCallTail)]
	k := strings.IndexAny(tail, "\r\n")
	if k < 0 {
		if hi+len(tail) < len(s) {
			return false
		}
		k = len(tail)
	}
	return isCallValue(s[lo : hi+k])
}

// isBlockIndicator reports whether v opens a YAML block scalar (|, >-, |+2):
// the value is on the lines below.
func isBlockIndicator(v string) bool {
	v = strings.TrimRight(v, " \t\r")
	if v == "" || (v[0] != '|' && v[0] != '>') {
		return false
	}
	for i := 1; i < len(v); i++ {
		if c := v[i]; c != '-' && c != '+' && !isDigit(c) {
			return false
		}
	}
	return len(v) <= 3
}

// blockExtent is the text of a block scalar whose name starts at i and
// whose indicator line ends at eol: the lines below indented deeper than
// the name's line, from the first one's text to the last one's end. An
// empty block gives an empty extent.
func blockExtent(s string, i, eol int) (int, int) {
	ls := strings.LastIndexByte(s[:i], '\n') + 1
	indent := skipSpaces(s, ls) - ls
	lo, hi := eol, eol
	for k := eol; k < len(s) && (s[k] == '\n' || s[k] == '\r'); {
		if s[k] == '\r' {
			k++
			continue
		}
		next := k + 1
		end := len(s)
		if e := strings.IndexByte(s[next:], '\n'); e >= 0 {
			end = next + e
		}
		text := skipSpaces(s, next)
		if line := strings.TrimRight(s[text:end], " \t\r"); line != "" {
			if text-next <= indent {
				break
			}
			if lo == eol {
				lo = text
			}
			hi = text + len(line)
		}
		k = end
	}
	return lo, hi
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// basicValue cuts the value at v of an auth name (s[:j]) when it is a
// Basic credential, as Docker's config.json and .npmrc keep a registry
// login; a probe only notes that it may be one.
func (sc *scanner) basicValue(j, v int, toEOL bool) int {
	if sc.probe {
		sc.hit = true
		return j
	}
	lo, hi := valueExtent(sc.s, skipBlanks(sc.s, v), toEOL)
	for hi > lo && (sc.s[hi-1] == ' ' || sc.s[hi-1] == '\t') {
		hi--
	}
	if !basicCredential(sc.s[lo:hi]) {
		return j
	}
	sc.add(lo, hi, KindBasicAuth)
	return hi
}

// valueToCut reports the kind of secret the name s[i:j] announces and
// whether its value is to be cut: a probe only notes that there is one.
func (sc *scanner) valueToCut(i, j int) (Kind, bool) {
	if connStringPwd(sc.s, i, j) {
		return sc.toCut(KindPassword)
	}
	return sc.nameToCut(sc.s[i:j])
}

// connStringPwd reports whether the name s[i:j] is the Pwd= of an ODBC or
// ADO.NET connection string (";Uid=sa;Pwd=x;"): PWD alone is the working
// directory, but not after the ';' that parts a connection string's keys.
// In a shell line a ';' parts commands (cd /srv; PWD=/tmp make): the one
// before it is no key=value pair, or the value is a directory that a
// command follows.
func connStringPwd(s string, i, j int) bool {
	if j >= len(s) || s[j] != '=' || !strings.EqualFold(s[i:j], "pwd") {
		return false
	}
	k := blanksBefore(s, i)
	return k > 0 && s[k-1] == ';' && pairBefore(s, k-1) && !directoryThenCommand(s, j+1)
}

// maxConnPair bounds the text read back from a ';' for the key=value pair
// before it.
const maxConnPair = 512

// pairBefore reports whether the text between the ';' at k and the ';',
// quote or line break before it holds a '=': a connection string's pair
// (Uid=sa, Driver={ODBC Driver 18}).
func pairBefore(s string, k int) bool {
	for b := k - 1; b >= 0 && k-b <= maxConnPair; b-- {
		switch s[b] {
		case '=':
			return true
		case ';', '"', '\'', '\n', '\r':
			return false
		}
	}
	return false
}

// directoryThenCommand reports whether the value at v is a path from the
// root or home (/tmp, ~/work) followed by a blank and a word: PWD set for
// the command after it.
func directoryThenCommand(s string, v int) bool {
	if v >= len(s) || s[v] != '/' && s[v] != '~' {
		return false
	}
	e := v
	for e < len(s) && (isAlnum(s[e]) || strings.IndexByte("/._-~", s[e]) >= 0) {
		e++
	}
	k := skipBlanks(s, e)
	return k > e && k < len(s) && s[k] != '\n' && s[k] != '\r'
}

// nameToCut is valueToCut for a name given decoded.
func (sc *scanner) nameToCut(name string) (Kind, bool) {
	kind, ok := sc.secretName(trimDashes(name))
	if !ok {
		return 0, false
	}
	return sc.toCut(kind)
}

// toCut reports a value of the kind as to be cut; a probe only notes it.
func (sc *scanner) toCut(kind Kind) (Kind, bool) {
	if sc.probe {
		sc.hit = true
		return 0, false
	}
	return kind, true
}

// cutValue cuts the value s[lo:hi] of a secret name unless it cannot be a
// secret (empty, a variable reference, a file path); a value in a known
// format is cut as that format.
func (sc *scanner) cutValue(lo, hi int, kind Kind) int {
	if strings.HasPrefix(sc.s[lo:hi], opensslPass) {
		lo += len(opensslPass) // openssl -passin pass:SECRET: the scheme stays
	}
	v := sc.s[lo:hi]
	if !plausibleValue(v) || passSource(v) {
		return max(hi, markerEnd(sc.s, lo)) // a value cut already is skipped whole
	}
	if substitution(sc.s, lo, hi) {
		return lo + 1 // scanning goes on in the command, which may hold a token
	}
	if k, ok := wholeFormat(v); ok {
		kind = k
	}
	sc.add(lo, hi, kind)
	return hi
}

// valueExtent is where a value starting at v ends: at its closing quote
// when quoted (an escaped quote in double quotes does not close it), else
// at the end of the line (toEOL) or at the first blank, quote, '&', ';',
// ',', marker or terminal color.
func valueExtent(s string, v int, toEOL bool) (int, int) {
	if v < len(s) && (s[v] == '"' || s[v] == '\'') {
		if end := closingQuote(s, v+1, s[v]); end >= 0 {
			return v + 1, end
		}
		return v + 1, lineEnd(s, v+1)
	}
	if v+1 < len(s) && s[v] == '\\' && s[v+1] == '"' {
		// an escaped quote opens the value (JSON inside a JSON string)
		if end := escapedClosingQuote(s, v+2); end >= 0 {
			return v + 2, end
		}
		return v + 2, lineEnd(s, v+2)
	}
	if toEOL {
		return v, lineEnd(s, v)
	}
	end := v
	for end < len(s) && !endsValue(s[end]) && s[end] != '[' && s[end] != esc {
		end++
	}
	if k := strings.IndexAny(s[v:end], "}]"); k > 0 && jsonScalar(s[v:v+k]) {
		end = v + k // "pin": 1234} in JSON text: the brace closes the object
	}
	return v, end
}

// endsValue reports whether c, plain or percent-encoded, ends a value
// inside text: a blank, a quote, '&', ';' or ','.
func endsValue(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '&', ';', ',':
		return true
	}
	return false
}

// jsonScalar reports whether v is a JSON literal or a number.
func jsonScalar(v string) bool {
	if v == "true" || v == "false" || v == "null" {
		return true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isDigit(c) && strings.IndexByte(".eE+-", c) < 0 {
			return false
		}
	}
	return true
}

// closingQuote is the index of the quote q that closes a value starting at
// i, or -1: a double quote after an odd number of backslashes is part of
// the value (JSON, shell); a single quote has no escapes.
func closingQuote(s string, i int, q byte) int {
	for i < len(s) {
		k := strings.IndexByte(s[i:], q)
		if k < 0 {
			return -1
		}
		if q == '"' && oddBackslashes(s, i+k) {
			i += k + 1
			continue
		}
		return i + k
	}
	return -1
}

// escapedClosingQuote is the index of the \" that closes a value of JSON
// text inside a JSON string starting at i, or -1: a quote that 4k+1
// backslashes precede. A quote inside the value is escaped twice (\\\").
func escapedClosingQuote(s string, i int) int {
	for {
		k := strings.Index(s[i:], `\"`)
		if k < 0 {
			return -1
		}
		q := i + k + 1
		n := 0
		for b := q - 1; b >= i && s[b] == '\\'; b-- {
			n++
		}
		if n%4 == 1 {
			return q - 1
		}
		i = q + 1
	}
}

// lineEnd is the index of the first line break at or after v, or len(s);
// a marker already in the line ends it too, so a value is never cut twice.
func lineEnd(s string, v int) int {
	end := len(s)
	if k := strings.IndexAny(s[v:], "\r\n"); k >= 0 {
		end = v + k
	}
	if k := strings.Index(s[v:end], markerPrefix); k >= 0 {
		end = v + k
	}
	return end
}

// plausibleValue: a value that is empty, a marker, a JSON literal, a shell
// or template reference ($VAR, ${VAR}, ${env.VAR}, %VAR%, {{ .x }}) or an
// absolute or relative file path names a secret without holding it.
func plausibleValue(v string) bool {
	if v == "" || strings.HasPrefix(v, markerPrefix) || v == "true" || v == "false" || v == "null" {
		return false
	}
	switch v[0] {
	case '%':
		// a percent-encoded first byte (%2B, %21, %2540) starts a form's
		// value, not a %VAR%; an encoded '$' or '%' still starts a
		// reference, and an encoded blank or quote no value
		if b, n := pctByte(v, 0); n > 0 && v[1] <= '7' && !wordByte[b] && b != '$' && b != '%' && !endsValue(b) {
			return true
		}
		return !isReference(v)
	case '$':
		return !isReference(v)
	case '{':
		return len(v) > 1 && !strings.HasPrefix(v, "{{") // "{" alone opens a JSON object
	}
	return !isPath(v)
}

// opensslPass starts a pass phrase argument of openssl (-passin, -passout,
// -pass) that holds the secret itself.
const opensslPass = "pass:"

// passSource reports whether v is one of openssl's other pass phrase
// arguments, which say where the secret is: env:VAR, file:PATH, fd:N,
// stdin.
func passSource(v string) bool {
	switch {
	case v == "stdin":
		return true
	case strings.HasPrefix(v, "env:"):
		return len(v) > len("env:") && isReference("$"+v[len("env:"):])
	case strings.HasPrefix(v, "file:"):
		return len(v) > len("file:") && !strings.ContainsAny(v, " \t")
	case strings.HasPrefix(v, "fd:"):
		return len(v) > len("fd:") && strings.TrimLeft(v[len("fd:"):], "0123456789") == ""
	}
	return false
}

// maxSubstitution bounds the text read for the end of a command
// substitution.
const maxSubstitution = 4096

// substitution reports whether the value s[lo:hi] is a command
// substitution, whole ($(cat f), Make's $(shell cat f), `cat f`): it runs a
// command that fetches the secret, as ${X} refers to one. An unquoted value
// that ends at a blank inside the command counts too (TOKEN=$(cat f) x).
func substitution(s string, lo, hi int) bool {
	open, closing := byte('('), byte(')')
	switch {
	case strings.HasPrefix(s[lo:], "$("):
		lo += 2
	case lo < len(s) && s[lo] == '`':
		open, closing, lo = 0, '`', lo+1
	default:
		return false
	}
	depth := 0
	for k := lo; k < min(len(s), lo+maxSubstitution); k++ {
		switch c := s[k]; {
		case c == '\n' || c == '\r':
			return false
		case c == open:
			depth++
		case c == closing && depth > 0:
			depth--
		case c == closing:
			return k+1 >= hi || strings.TrimRight(s[k+1:hi], " \t") == ""
		}
	}
	return false
}

func isReference(v string) bool {
	for i := 1; i < len(v); i++ {
		if c := v[i]; !isAlnum(c) && c != '_' && c != '.' && c != '{' && c != '}' && c != '%' {
			return false
		}
	}
	return true
}

// isPath: /a/b, ~/a, ./a, ../a with path bytes only and at least two
// slashes (a password may start with '/', rarely with more).
func isPath(v string) bool {
	if !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "~/") && !strings.HasPrefix(v, "./") && !strings.HasPrefix(v, "../") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isAlnum(c) && strings.IndexByte("/._-~", c) < 0 {
			return false
		}
	}
	return strings.Count(v, "/") >= 2
}

// flagValue handles a flag run s[i:j] followed by blanks: --password X.
func (sc *scanner) flagValue(i, j int) int {
	kind, ok := sc.valueToCut(i, j)
	if !ok {
		return j
	}
	s := sc.s
	v := skipBlanks(s, j)
	if v >= len(s) || s[v] == '-' {
		return v
	}
	lo, hi := valueExtent(s, v, false)
	if lo == v && isUsageWord(s[lo:hi]) {
		return hi // help text: --pass <phrase>, "if --pass is given"
	}
	return sc.cutValue(lo, hi, kind)
}

// probeFlag: in data text, a string at i that is a flag naming a secret
// (["--password","x"]) means the next element may be cut.
func (sc *scanner) probeFlag(i int) {
	if i >= len(sc.s) || sc.s[i] != '-' {
		return
	}
	end := strings.IndexByte(sc.s[i:], '"')
	if end < 0 {
		return
	}
	if _, ok := sc.flagNeedsValue(sc.s[i : i+end]); ok || isCookieFlag(sc.s[i:i+end]) {
		sc.hit = true
	}
}

// probeName: in data text, the member name that ends with the quote at i
// (no escapes: the probe only sees text without them) may say that the
// values below it are secret, whatever bytes it holds ("db password").
func (sc *scanner) probeName(i int) {
	open := strings.LastIndexByte(sc.s[:i], '"')
	if open < 0 {
		return
	}
	name := sc.s[open+1 : i]
	if _, ok := sc.secretName(name); ok || isAuthorization(name) || isAuthName(name) || isCookieName(name) {
		sc.hit = true
	}
}

// flagNeedsValue reports whether an argv element is a flag that names a
// secret and takes its value from the next element.
func (sc *scanner) flagNeedsValue(arg string) (Kind, bool) {
	if len(arg) < 2 || arg[0] != '-' || strings.ContainsAny(arg, "= ") {
		return 0, false
	}
	if k := strings.IndexByte(arg, ':'); k >= 0 && k < len(arg)-1 {
		return 0, false // -secret:VALUE holds its value
	}
	return sc.secretName(trimDashes(arg))
}

// trimDashes is a flag's name without its leading dashes.
func trimDashes(s string) string {
	for len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	return s
}

// isScheme: an authorization scheme name alone is no credential.
func isScheme(w string) bool {
	for _, scheme := range [...]string{"bearer", "basic", "token", "digest", "negotiate", "ntlm"} {
		if strings.EqualFold(w, scheme) {
			return true
		}
	}
	return false
}

func isAuthorization(name string) bool {
	if len(name) != len("authorization") && len(name) != len("proxy-authorization") {
		return false
	}
	return strings.EqualFold(name, "authorization") || strings.EqualFold(name, "proxy-authorization")
}

// authorization cuts an Authorization header's credentials at v: after a
// scheme word, the credential; without one, the single token.
func (sc *scanner) authorization(v int) int {
	if sc.probe {
		sc.hit = true
		return v
	}
	s := sc.s
	v = skipBlanks(s, v)
	v += literalPrefix(s, v)
	if v < len(s) && (s[v] == '"' || s[v] == '\'') {
		v++
	} else if v+1 < len(s) && s[v] == '\\' && s[v+1] == '"' {
		v += 2
	}
	w := v
	for w < len(s) && token68[s[w]] {
		w++
	}
	if w == v {
		return v
	}
	c := skipBlanks(s, w)
	if strings.HasPrefix(s[c:], markerPrefix) {
		return c // the credential is cut already
	}
	e := c
	for e < len(s) && token68[s[e]] {
		e++
	}
	if c == w || e == c { // one word: the credential itself
		if !plausibleValue(s[v:w]) || isScheme(s[v:w]) {
			return w
		}
		sc.add(v, w, KindAuthorization)
		return w
	}
	if kind, ok := schemeKind(s[v:w]); ok {
		sc.add(c, e, kind)
		return e
	}
	// Digest, AWS4-HMAC-SHA256 ...: parameters to a quote or the end of
	// the line, looked for only as far as the first of them
	e = len(s)
	if q := strings.IndexAny(s[c:], "\"'\r\n"); q >= 0 {
		e = c + q
	}
	e = lineEnd(s[:e], c)
	sc.add(c, e, KindAuthorization)
	return e
}

// schemeKind is the kind of the one credential after an Authorization
// scheme that takes a single one (Bearer, Basic, token); false for any
// other scheme, whose parameters run on.
func schemeKind(scheme string) (Kind, bool) {
	switch {
	case strings.EqualFold(scheme, "bearer"):
		return KindBearerToken, true
	case strings.EqualFold(scheme, "basic"):
		return KindBasicAuth, true
	case strings.EqualFold(scheme, "token"):
		return KindAuthorization, true
	}
	return 0, false
}

// literalPrefix is the length of a Python string literal's prefix at v
// (f"Bearer {token}", b'…'), or 0: the prefix is no credential.
func literalPrefix(s string, v int) int {
	for n := 1; n <= 2 && v+n < len(s); n++ {
		if c := s[v+n-1] | 0x20; c != 'f' && c != 'r' && c != 'b' && c != 'u' {
			return 0
		}
		if s[v+n] == '"' || s[v+n] == '\'' {
			return n
		}
	}
	return 0
}

// bareBearer cuts "Bearer <token>" outside an Authorization header when the
// token is long and has a digit: "bearer of bad news" stays.
func (sc *scanner) bareBearer(j int) int {
	s := sc.s
	c := j
	for c < len(s) && s[c] == ' ' {
		c++
	}
	if c == j {
		return j
	}
	e := c
	digit := false
	for e < len(s) && token68[s[e]] {
		digit = digit || isDigit(s[e])
		e++
	}
	if e-c < minFormatRun || !digit {
		return j
	}
	sc.add(c, e, KindBearerToken)
	return e
}

// urlPassword cuts the password of scheme://user:password@host, the
// authority starting at a.
func (sc *scanner) urlPassword(a int) int {
	s := sc.s
	end := a
	for end < len(s) && strings.IndexByte("/?#\"' \t\r\n<>[]", s[end]) < 0 {
		end++
	}
	at := strings.LastIndexByte(s[a:end], '@')
	if at < 0 {
		host := withoutPort(s[a:end])
		if strings.EqualFold(host, "hooks.slack.com") {
			return sc.slackWebhook(end)
		}
		if len(host) >= len("discord.com") && host[len(host)-1]|0x20 == 'm' && discordHost(host) {
			return sc.discordWebhook(end)
		}
		if at = sc.delimitedUserinfoEnd(a, end); at < 0 {
			return a
		}
	} else {
		at += a
	}
	colon := strings.IndexByte(s[a:at], ':')
	if colon < 0 {
		return a // no password: the user part may itself be a token the detectors know
	}
	sc.add(a+colon+1, at, KindURLPassword)
	return at + 1
}

// maxUserinfo bounds how far past a '/', '?' or '#' a URL's userinfo is
// looked for.
const maxUserinfo = 256

// delimitedUserinfoEnd returns the '@' that ends the userinfo of the URL
// whose authority starts at a, when the password holds a '/', '?' or '#'
// (at end) unencoded, as a generated password pasted into a database URL
// does (postgres://app:x/y#z@db/prod); -1 when there is none. The text
// before the delimiter must be user:something, where something is no
// port, nor a reference to one (https://host:8080/@me is a path).
func (sc *scanner) delimitedUserinfoEnd(a, end int) int {
	s := sc.s
	colon := strings.IndexByte(s[a:end], ':')
	if end >= len(s) || colon < 0 || s[end] != '/' && s[end] != '?' && s[end] != '#' {
		return -1
	}
	if p := s[a+colon+1 : end]; allDigits(p) || !plausibleValue(p) {
		return -1 // a port, or one given as a reference (localhost:${PORT})
	}
	at := sc.atAfter(end)
	if at < 0 || at-end >= maxUserinfo {
		return -1
	}
	return at
}

// userinfoStops end the text looked at for a userinfo's '@': the '@', and
// the blanks, quotes and angle brackets that end a URL before it.
const userinfoStops = "@\"' \t\r\n<>"

// atAfter returns the first '@' at or after k, -1 if a blank, quote or
// angle bracket comes first or none is before k+maxUserinfo. What it
// searched is remembered (ats), so that many URLs on one line do not each
// search the same stretch again.
func (sc *scanner) atAfter(k int) int {
	c := &sc.ats
	lim := min(len(sc.s), k+maxUserinfo)
	switch {
	case !c.set || k < c.from || c.stop >= 0 && k > c.stop || c.stop < 0 && k > c.to:
		*c = atSearch{set: true, from: k, to: k, stop: -1}
	case c.stop >= 0:
		return c.at(sc.s) // the first stop at or after c.from, and k is between
	}
	if c.to >= lim {
		return -1
	}
	if j := strings.IndexAny(sc.s[c.to:lim], userinfoStops); j >= 0 {
		c.stop = c.to + j
		return c.at(sc.s)
	}
	c.to = lim
	return -1
}

// atSearch is what atAfter found: no stop in s[from:to], or, when stop
// is not -1, the first after from at stop.
type atSearch struct {
	set            bool
	from, to, stop int
}

// at is the stop found when it is an '@', else -1.
func (c *atSearch) at(s string) int {
	if s[c.stop] != '@' {
		return -1
	}
	return c.stop
}

func allDigits(s string) bool {
	for k := 0; k < len(s); k++ {
		if !isDigit(s[k]) {
			return false
		}
	}
	return true
}

// slackWebhook cuts the secret of a Slack webhook, the third segment of
// the path at p (/services/T…/B…/secret). Each segment is read only to
// the next '/', so a text of repeated URLs costs linear time.
func (sc *scanner) slackWebhook(p int) int {
	const services = "/services/"
	s := sc.s
	if !strings.HasPrefix(s[p:], services) {
		return p
	}
	k := p + len(services)
	for range 2 { // the team and the bot
		e := webhookSegmentEnd(s, k)
		if e == k || e >= len(s) || s[e] != '/' {
			return p // no webhook: the path is scanned as any text
		}
		k = e + 1
	}
	return sc.webhookSecret(k, KindSlackToken)
}

// webhookSecret cuts as kind the webhook's secret, the path segment at
// k, unless it is empty or a marker already; it returns where the
// segment ends.
func (sc *scanner) webhookSecret(k int, kind Kind) int {
	s := sc.s
	end := webhookSegmentEnd(s, k)
	if end == k || strings.HasPrefix(s[k:], markerPrefix) {
		return max(end, markerEnd(s, k))
	}
	sc.add(k, end, kind)
	return end
}

// withoutPort is the host of an authority without userinfo, its port
// (hooks.slack.com:443) left off.
func withoutPort(authority string) string {
	if c := strings.LastIndexByte(authority, ':'); c >= 0 && allDigits(authority[c+1:]) {
		return authority[:c]
	}
	return authority
}

// discordHost reports whether host is Discord's API host: discord.com,
// discordapp.com or one under them (ptb., canary.).
func discordHost(host string) bool {
	for _, d := range [...]string{"discord.com", "discordapp.com"} {
		n := len(host) - len(d)
		if n >= 0 && strings.EqualFold(host[n:], d) && (n == 0 || host[n-1] == '.') {
			return true
		}
	}
	return false
}

// discordWebhook cuts the token of a Discord webhook, the segment after
// the webhook's id in the path at p (/api/webhooks/ID/token, or
// /api/v10/webhooks/ID/token); what follows it (?wait=true, /messages/…)
// stays. Each segment is read only to the next '/'.
func (sc *scanner) discordWebhook(p int) int {
	s := sc.s
	k, ok := cutPrefix(s, p, "/api/")
	if !ok {
		return p
	}
	if k < len(s) && s[k] == 'v' {
		e := k + 1
		for e < len(s) && isDigit(s[e]) {
			e++
		}
		if e == k+1 || e >= len(s) || s[e] != '/' {
			return p
		}
		k = e + 1
	}
	if k, ok = cutPrefix(s, k, "webhooks/"); !ok {
		return p
	}
	e := webhookSegmentEnd(s, k)
	if e == k || e >= len(s) || s[e] != '/' || !allDigits(s[k:e]) {
		return p
	}
	return sc.webhookSecret(e+1, KindDiscordWebhook)
}

// cutPrefix is the index after prefix when s holds it at k.
func cutPrefix(s string, k int, prefix string) (int, bool) {
	if !strings.HasPrefix(s[k:], prefix) {
		return k, false
	}
	return k + len(prefix), true
}

// webhookSegmentEnd is the end of the URL path segment at k.
func webhookSegmentEnd(s string, k int) int {
	for k < len(s) && strings.IndexByte("/?#\"' \t\r\n<>", s[k]) < 0 {
		k++
	}
	return k
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// blanksBefore is where the blanks that end at i start.
func blanksBefore(s string, i int) int {
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	return i
}

func runEnd(s string, i int) int {
	for i < len(s) && wordByte[s[i]] {
		i++
	}
	return i
}

// maxPgpassHost bounds the host name read back from a .pgpass line.
const maxPgpassHost = 255

// pgpassLine handles the run s[i:j], followed by ':', when it ends the
// first field of a line of a .pgpass file ("host:port:db:user:password",
// cat ~/.pgpass) or follows only fields that are '*': it cuts the password and
// reports the end of the line. Other text with colons (a compiler's
// "file:12:5: msg", a time, a MAC address) has too many or too few fields,
// a port or user that says otherwise, or blanks before the last field.
func (sc *scanner) pgpassLine(i, j int) (int, bool) {
	s := sc.s
	ls := i
	for ls > 0 && i-ls <= maxPgpassHost && hostByte(s[ls-1]) {
		ls--
	}
	stars := 0
	for ; stars < 3 && ls >= 2 && s[ls-1] == ':' && s[ls-2] == '*'; stars++ {
		ls -= 2 // *:*:*:user:password
	}
	if ls > 0 && s[ls-1] != '\n' && !sc.stringStart(ls) || ls < i && s[ls] == '.' || !pgpassPortFits(s, i, j, stars) {
		return 0, false
	}
	end := lineEnd(s[:sc.stringEnd(j)], j)
	var colons [4]int
	n := 0
	for k := ls; k < end; k++ {
		if s[k] != ':' || oddBackslashes(s, k) {
			continue
		}
		if n == len(colons) {
			return 0, false // a sixth field
		}
		colons[n] = k
		n++
	}
	if n != len(colons) || !pgpassFields(s[ls:colons[0]], s[colons[0]+1:colons[1]], s[colons[1]+1:colons[2]], s[colons[2]+1:colons[3]]) {
		return 0, false
	}
	if sc.probe {
		sc.hit = true
		return end, true
	}
	return sc.cutValue(colons[3]+1, end, KindPassword), true
}

// stringStart reports whether a probe's data text has a string start at
// k: after its opening quote (data text without escapes, where a closing
// quote is never followed by a word byte).
func (sc *scanner) stringStart(k int) bool { return sc.probe && sc.s[k-1] == '"' }

// stringEnd is where the string that k is in ends in a probe's data text,
// at its closing quote; elsewhere the end of the text.
func (sc *scanner) stringEnd(k int) int {
	if !sc.probe {
		return len(sc.s)
	}
	if q := strings.IndexByte(sc.s[k:], '"'); q >= 0 {
		return k + q
	}
	return len(sc.s)
}

// pgpassPortFits is a look at the port field before the line is read, so
// that text with a word and a colon at a line's start ("key: value",
// "INFO:") costs no read of the line: after a host (no '*' field before
// the run s[i:j]) the port follows the run; after one '*' it is the run.
func pgpassPortFits(s string, i, j, stars int) bool {
	switch stars {
	case 0:
		k := j + 1
		if k+1 < len(s) && s[k] == '*' && s[k+1] == ':' {
			return true
		}
		n := 0
		for n < 6 && k+n < len(s) && isDigit(s[k+n]) {
			n++
		}
		return n >= 4 && n <= 5 && k+n < len(s) && s[k+n] == ':'
	case 1:
		return pgpassPort(s[i:j])
	}
	return true
}

// pgpassFields reports whether the first four fields of a line are those
// of a .pgpass entry: a host name or '*', a port of 4 or 5 digits or '*',
// a database that starts as pgpassDBStart says and a user, both without
// blanks, the user no number (the minutes of a time after grep's
// file:1234:, app.log:1234:12:00:00 up).
func pgpassFields(host, port, db, user string) bool {
	if host == "" || db == "" || user == "" || !pgpassDBStart(db[0]) || strings.ContainsAny(db+user, " \t") || allDigits(user) {
		return false
	}
	if port == "*" {
		return true
	}
	return pgpassPort(port)
}

// pgpassDBStart reports whether c may start a .pgpass line's database: a
// letter, '_' or '*', as the prefilter's trigram for the line holds it
// (after a digit, a time's 12:30:00 is no trigger).
func pgpassDBStart(c byte) bool { return isLower(c|0x20) || c == '_' || c == '*' }

// pgpassPort reports whether p is a port of 4 or 5 digits: a database
// listens above 1023; grep's file:12: is a line number.
func pgpassPort(p string) bool { return len(p) >= 4 && len(p) <= 5 && allDigits(p) }

// hostByte reports whether c may be part of a host name or an IPv4
// address.
func hostByte(c byte) bool {
	return wordByte[c] || c == '.'
}
