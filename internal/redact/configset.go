package redact

import "strings"

// Tools store a secret with a "config set NAME VALUE" command: aws
// configure set aws_secret_access_key X, npm config set
// //registry.npmjs.org/:_authToken X, yarn config set npmAuthToken X, git
// config set user.password X. NAME is no flag, so the value after it is
// read only after the words config set (or configure set).

// maxConfigWord bounds the words read back from a name to its "set".
const maxConfigWord = 256

// maxConfigFlags bounds the flags read back between set and a name (git
// config set --global user.password X).
const maxConfigFlags = 3

// configSetBefore reports whether the word holding s[i] (up to blanks)
// follows the words config set or configure set, and flags after them.
func configSetBefore(s string, i int) bool {
	w := i
	for w > 0 && !isSpace(s[w-1]) && i-w < maxConfigWord {
		w--
	}
	set, p := wordBefore(s, w)
	for range maxConfigFlags {
		if !strings.HasPrefix(set, "-") {
			break
		}
		set, p = wordBefore(s, p)
	}
	if set != "set" {
		return false
	}
	cfg, _ := wordBefore(s, p)
	return isConfigWord(cfg)
}

// afterSet reports whether the scan passed a word "set" shortly before i,
// as configSetBefore needs: most words are far from one, and are not read
// back.
func (sc *scanner) afterSet(i int) bool {
	return sc.setEnd > 0 && i-sc.setEnd <= maxConfigWord+maxConfigFlags*(len("configure")+2)
}

// wordBefore is the blank-delimited word that ends before the blanks
// before w, and its start; a word longer than a config word is not read
// whole (it is no word configSetBefore looks for).
func wordBefore(s string, w int) (string, int) {
	e := w
	for e > 0 && (s[e-1] == ' ' || s[e-1] == '\t') {
		e--
	}
	if e == w {
		return "", w
	}
	b := e
	for b > 0 && !isSpace(s[b-1]) && e-b <= len("configure") {
		b--
	}
	return s[b:e], b
}

func isConfigWord(w string) bool { return w == "config" || w == "configure" }

// probeConfigSet: in data text, the element "set" after "config" or
// "configure" (the quote before it at i) means the element after the next
// may be cut.
func (sc *scanner) probeConfigSet(i int) {
	s := sc.s
	if !strings.HasPrefix(s[i+1:], `set"`) {
		return
	}
	head := strings.TrimRight(s[max(0, i-len(`"configure",`)):i], ",")
	if strings.HasSuffix(head, `"config"`) || strings.HasSuffix(head, `"configure"`) {
		sc.hit = true
	}
}

// configSet follows an argv array through config set NAME (see
// dataVisitor): 0 none, then each word of the three seen in turn.
type configSet uint8

const (
	noConfigSet configSet = iota
	sawConfig
	sawSet
	sawName
)

// next is the state after the element s.
func (c configSet) next(s string) configSet {
	switch {
	case isConfigWord(s):
		return sawConfig
	case c == sawConfig && s == "set":
		return sawSet
	case c == sawSet && strings.HasPrefix(s, "-"):
		return sawSet // a flag before the name: git config set --global
	case c == sawSet:
		return sawName
	}
	return noConfigSet
}
