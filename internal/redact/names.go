package redact

import (
	"bytes"
	"encoding/base64"
	"strings"
	"unsafe"
)

// maxNameLen bounds the part of a name classified: a longer name is
// classified by its words in its last maxNameLen bytes, where the secret
// word of a long name is (..._SERVICE_DB_PASSWORD).
const maxNameLen = 64

// nameWords splits a variable, flag, header or member name into lowercase
// words at every non-alphanumeric byte and at lower-to-upper case changes
// (apiKey, DB_PASSWORD, --api-key, X-Api-Key all give api, key). buf holds
// the lowercase text; the words index it.
type nameWords struct {
	buf   [maxNameLen]byte
	lo    [maxNameLen/2 + 1]uint8
	hi    [maxNameLen/2 + 1]uint8
	count int
}

func (w *nameWords) split(name string) bool {
	w.count = 0
	if len(name) > maxNameLen {
		name = lastWords(name)
	}
	start := -1
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := isAlnum(c)
		boundary := !alnum || (start >= 0 && isUpper(c) && isLower(name[i-1]))
		if boundary && start >= 0 {
			w.add(start, i)
			start = -1
		}
		if alnum {
			if start < 0 {
				start = i
			}
			w.buf[i] = toLower(c)
		}
	}
	if start >= 0 {
		w.add(start, len(name))
	}
	return w.count > 0
}

// lastWords is the end of a long name, at most maxNameLen bytes, starting
// at a word boundary.
func lastWords(name string) string {
	i := len(name) - maxNameLen
	for i < len(name) && isAlnum(name[i]) && isAlnum(name[i-1]) && (!isUpper(name[i]) || !isLower(name[i-1])) {
		i++
	}
	return name[i:]
}

func (w *nameWords) add(lo, hi int) {
	if w.count < len(w.lo) {
		w.lo[w.count], w.hi[w.count] = uint8(lo), uint8(hi)
		w.count++
	}
}

// word is a view of buf, valid while w is: classifying a name allocates
// nothing.
func (w *nameWords) word(i int) string {
	return unsafe.String(&w.buf[w.lo[i]], int(w.hi[i]-w.lo[i]))
}

// secretWord is the kind a single word names, if any: the word itself or a
// word ending in it (pgpassword, authtoken, clientsecret, storepass).
func secretWord(word string) (Kind, bool) {
	switch word {
	case "passin", "passout": // openssl -passin
		return KindPassword, true
	case "bypass", "compass", "surpass", "trespass", "overpass", "underpass":
		return 0, false
	case "secrets":
		return KindSecret, true
	case "apikeys":
		return KindAPIKey, true
	}
	for _, s := range [...]struct {
		suffix string
		kind   Kind
	}{
		{"password", KindPassword}, {"passwd", KindPassword}, {"passphrase", KindPassword}, {"pass", KindPassword}, {"pwd", KindPassword},
		{"secret", KindSecret}, {"token", KindToken}, {"apikey", KindAPIKey},
		{"credential", KindCredential}, {"credentials", KindCredential},
	} {
		if strings.HasSuffix(word, s.suffix) {
			return s.kind, true
		}
	}
	return 0, false
}

// valueSuffix holds the words that may follow the secret word in a name
// whose value is still the secret (SECRET_ACCESS_KEY, TOKEN_VALUE,
// password_b64). Any other trailing word names something about the secret
// (TOKEN_FILE, password_length, SECRET_NAME), not the secret itself.
func valueSuffix(word string) bool {
	switch word {
	case "key", "keys", "value", "val", "data", "string", "str", "text", "b64", "base64", "hex",
		"raw", "plain", "plaintext", "access", "id", "encoded", "enc",
		"base",           // Rails' SECRET_KEY_BASE
		"word", "phrase": // PassWord, PassPhrase
		return true
	}
	return false
}

// notValuePrefix holds first words that make the name a number about
// secrets (max_token, num_secrets) or a switch that takes no value
// (--no-password, --ask-vault-pass).
func notValuePrefix(word string) bool {
	switch word {
	case "max", "min", "num", "n", "count", "no", "ask":
		return true
	}
	return false
}

// workingDir reports whether a one-word name is the shell's working
// directory (PWD, OLDPWD), not a password as MYSQL_PWD is.
func workingDir(word string) bool { return word == "pwd" || word == "oldpwd" }

// SecretName reports whether a variable, flag, header, member or query
// parameter name says its value is a secret (DB_PASSWORD, apiKey,
// access_token, client-secret, auth), as the redactor judges names.
func SecretName(name string) bool {
	_, ok := classifyName(name)
	return ok || isAuthName(name)
}

// classifyName reports whether a name says its value is a secret, and
// which kind.
func classifyName(name string) (Kind, bool) {
	if !hasSecretStem(name) {
		return 0, false
	}
	var w nameWords
	if !w.split(name) {
		return 0, false
	}
	if notValuePrefix(w.word(0)) || w.count == 1 && workingDir(w.word(0)) {
		return 0, false
	}
	// The value is the secret only when the name ends in a secret word or
	// in a word that may follow one: most names fail here, at one look.
	if last := w.word(w.count - 1); !valueSuffix(last) {
		if _, ok := secretWord(last); !ok {
			return 0, false
		}
	}
	kind, at := Kind(0), -1
	for i := 0; i < w.count; i++ {
		word := w.word(i)
		if k, ok := secretWord(word); ok {
			kind, at = k, i
			continue
		}
		if word == "key" || word == "keys" {
			switch {
			case i > 0 && w.word(i-1) == "api":
				kind, at = KindAPIKey, i
			case i > 0 && w.word(i-1) == "private":
				kind, at = KindPrivateKey, i
			case i > 0 && w.word(i-1) == "account", // Azure's AccountKey
				i > 1 && w.word(i-1) == "access" && w.word(i-2) == "shared": // SharedAccessKey
				kind, at = KindAPIKey, i
			}
		}
	}
	if at < 0 {
		return 0, false
	}
	for i := at + 1; i < w.count; i++ {
		if !valueSuffix(w.word(i)) {
			return 0, false
		}
		if kind == KindSecret && w.word(i) == "access" {
			kind = KindAWSSecretKey // secret_access_key, AWS's name for it
		}
	}
	return kind, true
}

// hasSecretStem reports whether name holds pass, pwd, secret, token, key or
// credential in any case: every name classifyName accepts holds one (apikey
// and "private key" hold key), and most names (command, cwd, exit_code)
// fail this cheap test.
func hasSecretStem(name string) bool {
	for i := 0; i+3 <= len(name); i++ {
		var stem string
		switch name[i] | 0x20 { // ASCII letters to lower case
		case 'p':
			stem = "pass"
			if hasPrefixFold(name[i:], "pwd") {
				return true
			}
		case 's':
			stem = "secret"
		case 't':
			stem = "token"
		case 'k':
			stem = "key"
		case 'c':
			stem = "credential"
		default:
			continue
		}
		if hasPrefixFold(name[i:], stem) {
			return true
		}
	}
	return false
}

// hasPrefixFold: s starts with lower, a lowercase ASCII word, in any case.
func hasPrefixFold(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for k := 0; k < len(lower); k++ {
		if s[k]|0x20 != lower[k] {
			return false
		}
	}
	return true
}

// isAuthName reports whether a name is auth alone, in any case, after
// dashes or underscores (_auth in .npmrc): its value may be a Basic
// credential.
func isAuthName(name string) bool {
	for len(name) > 0 && (name[0] == '_' || name[0] == '-') {
		name = name[1:]
	}
	return len(name) == 4 && hasPrefixFold(name, "auth")
}

// maxBasicCredential bounds the values decoded as Basic credentials.
const maxBasicCredential = 1024

// basicCredential reports whether v is base64 of user:password, printable
// ASCII with both parts non-empty, as a Basic credential is.
func basicCredential(v string) bool {
	if len(v) < 8 || len(v) > maxBasicCredential || len(v)%4 != 0 {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return false
	}
	colon := bytes.IndexByte(b, ':')
	if colon <= 0 || colon == len(b)-1 {
		return false
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// normalizeName is a user key's comparable form: lowercase letters and
// digits only, so DB-Pass, db_pass and DBPASS are one name.
func normalizeName(name string) string {
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		if c := name[i]; isAlnum(c) {
			b = append(b, toLower(c))
		}
	}
	return string(b)
}

// equalNormalized reports whether normalizeName(name) == norm without
// allocating.
func equalNormalized(name, norm string) bool {
	j := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) {
			continue
		}
		if j >= len(norm) || toLower(c) != norm[j] {
			return false
		}
		j++
	}
	return j == len(norm)
}

func isAlnum(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func toLower(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}
