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

// maxClosers bounds the brackets that may close an object or list after a
// call value, {"password": get_pw()}.
const maxClosers = 3

// isCallValue reports whether an unquoted value is a call or an index
// expression, getpass() or os.environ["X"]: code that fetches the secret.
// A trailing ',' or ';' is allowed, and up to maxClosers '}' or ']' that
// close the object or list the call is in.
func isCallValue(v string) bool {
	v = strings.TrimRight(v, " \t;,")
	for range maxClosers {
		if isCallExpr(v) {
			return true
		}
		if v == "" || (v[len(v)-1] != '}' && v[len(v)-1] != ']') {
			return false
		}
		v = v[:len(v)-1]
	}
	return isCallExpr(v)
}

// isCallExpr reports whether v is a name followed by a bracketed argument
// list or index.
func isCallExpr(v string) bool {
	if len(v) < 3 || !isLower(v[0]) && !isUpper(v[0]) && v[0] != '_' {
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

// maxSelectorPart bounds each name of a selector: a token with a dot
// (dp.st.prd.<40 characters>) has a longer part.
const maxSelectorPart = 24

// isCodeValue reports whether an unquoted value is a code literal (nil,
// None, undefined, a hex constant) or a selector (cfg.Password,
// &opts.Token): code that holds no secret or fetches it. A trailing ',',
// ';', ')' or ':' is allowed; a value in a known format is never code.
func isCodeValue(v string) bool {
	v = strings.TrimRight(v, " \t,;):")
	switch v {
	case "nil", "None", "NULL", "null", "undefined", "true", "false", "True", "False", "{}", "[]":
		return true
	case "":
		return false
	}
	if _, ok := wholeFormat(v); ok {
		return false
	}
	if hex, ok := strings.CutPrefix(v, "0x"); ok {
		return len(hex) > 0 && len(hex) <= 16 && strings.TrimLeft(hex, "0123456789abcdefABCDEF") == ""
	}
	return isSelector(strings.TrimLeft(v, "&*"))
}

// isSelector reports whether v is two or more short names joined by dots
// that read as code: a short receiver first (p.token, cfg.Password) or a
// camelCase or snake_case name (x.NextPageToken, self.key_password). Words
// joined by dots (correct.horse.battery.staple) may be a passphrase.
func isSelector(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 2 || !isLower(v[0]) && v[0] != '_' {
		return false // a receiver is a lower-case name: MyDog.Rex is a password
	}
	code := len(parts[0]) <= maxReceiver
	for _, p := range parts {
		if p == "" || len(p) > maxSelectorPart || isDigit(p[0]) {
			return false
		}
		for k := 0; k < len(p); k++ {
			switch c := p[k]; {
			case c == '_' || k > 0 && isUpper(c):
				code = true
			case !isAlnum(c):
				return false
			}
		}
	}
	return code
}

// maxReceiver bounds the short first name of a selector (p, tc, cfg, self).
const maxReceiver = 4

// isUsageWord reports whether the word after a flag is help text, not a
// value: a placeholder (<phrase>), a usage separator (|) or a word of a
// sentence about the flag ("use --password to set it").
func isUsageWord(w string) bool {
	if len(w) > 2 && w[0] == '<' && w[len(w)-1] == '>' {
		return true
	}
	switch w {
	case "|", "is", "are", "was", "will", "can", "may", "must", "should", "to", "on", "and", "or", "but", "the", "with", "for", "of", "in", "if", "as":
		return true
	}
	return false
}
