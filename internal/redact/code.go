package redact

import "strings"

// codeAssignment handles a secret name s[i:j] given a value in source code
// at v (after := or =, or after ':' in an object literal): only a string
// literal is cut. A call, a name or any other expression is code that
// fetches the secret, not the secret (token := lexer.Next()).
func (sc *scanner) codeAssignment(i, j, v int) int {
	s := sc.s
	v = skipBlanks(s, v)
	if v >= len(s) || !isLiteralQuote(s[v]) {
		return j
	}
	kind, ok := sc.valueToCut(i, j)
	if !ok {
		return j
	}
	lo, hi := valueExtent(s, v, false)
	if s[v] == '`' { // a raw string, which may span lines
		lo, hi = v+1, closingQuote(s, v+1, '`')
		if hi < 0 {
			hi = lineEnd(s, lo)
		}
	}
	return sc.cutValue(lo, hi, kind)
}

// colonEquals handles a secret name s[i:j] before ":=", its value at v:
// Go's apiKey := "x", or a Makefile's TOKEN := x, which starts its line
// unindented (Go's := is always inside a function, indented).
func (sc *scanner) colonEquals(i, j, v int) int {
	if i == 0 || sc.s[i-1] == '\n' {
		if q := skipBlanks(sc.s, v); q < len(sc.s) && !isLiteralQuote(sc.s[q]) {
			return sc.assignment(i, j, v, true)
		}
	}
	return sc.codeAssignment(i, j, v)
}

// isLiteralQuote reports whether c opens a string literal in source code.
func isLiteralQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

// memberStart reports whether the run at i starts a member of an object
// literal or an argument list: it follows '{', ',' or '(', after blanks.
func memberStart(s string, i int) bool {
	k := i - 1
	for k >= 0 && (s[k] == ' ' || s[k] == '\t') {
		k--
	}
	return k >= 0 && (s[k] == '{' || s[k] == ',' || s[k] == '(')
}

// isCallValue reports whether an unquoted value is a call or an index
// expression, getpass() or os.environ["X"]: code that fetches the secret.
// A trailing ',' or ';' is allowed.
func isCallValue(v string) bool {
	v = strings.TrimRight(v, " \t;,")
	if len(v) < 3 || !(isLower(v[0]) || isUpper(v[0]) || v[0] == '_') {
		return false
	}
	k := 1
	for k < len(v) && (isAlnum(v[k]) || v[k] == '_' || v[k] == '.') {
		k++
	}
	if k == len(v) {
		return false
	}
	switch v[k] {
	case '(':
		return v[len(v)-1] == ')'
	case '[':
		return v[len(v)-1] == ']'
	}
	return false
}
