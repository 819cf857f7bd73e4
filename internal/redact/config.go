package redact

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// minHashKeyLen is the shortest hash key accepted: a short key lets the
// hashes be tested against guesses.
const minHashKeyLen = 16

// maxHashKeyFileBytes bounds the key file read.
const maxHashKeyFileBytes = 4096

// Validate compiles a level's expressions and reads its hash key, so that
// a bad one stops the collector at start; errors name the key (relative to
// the redact section, after prefix) and the index.
func Validate(prefix string, c auditevent.RedactOverride) error {
	var errs []error
	for i, p := range c.Patterns {
		if _, err := compile(p); err != nil {
			errs = append(errs, fmt.Errorf("%spatterns[%d]: %w", prefix, i, err))
		}
	}
	for i, p := range c.Allow {
		if _, err := compile(p); err != nil {
			errs = append(errs, fmt.Errorf("%sallow[%d]: %w", prefix, i, err))
		}
	}
	for i, k := range c.Keys {
		if normalizeName(k) == "" {
			errs = append(errs, fmt.Errorf("%skeys[%d]: %q has no letter or digit", prefix, i, k))
		}
	}
	if c.HashKeyFile != nil {
		if _, err := loadHashKey(*c.HashKeyFile); err != nil {
			errs = append(errs, fmt.Errorf("%shash_key_file: %w", prefix, err))
		}
	}
	return errors.Join(errs...)
}

func compile(p string) (*regexp.Regexp, error) {
	if p == "" {
		return nil, errors.New("empty pattern (it would match everywhere)")
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("not an RE2 expression: %w", err)
	}
	// Parsed again for its tree: Compile keeps none. It parsed once, so
	// it parses again.
	if tree, err := syntax.Parse(p, syntax.Perl); err == nil && matchesEmpty(tree) {
		return nil, fmt.Errorf("%q can match an empty string", p)
	}
	return re, nil
}

// matchesEmpty reports whether re can match zero bytes somewhere in some
// text: an empty match cuts nothing as a pattern and keeps every cut as an
// allow expression. re.MatchString("") misses `\b`, which matches no
// empty text but the empty string beside every word; here every
// assertion counts as matching, whatever surrounds it.
func matchesEmpty(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpStar, syntax.OpQuest:
		return true
	case syntax.OpLiteral:
		return len(re.Rune) == 0
	case syntax.OpCapture, syntax.OpPlus:
		return matchesEmpty(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min == 0 || matchesEmpty(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !matchesEmpty(sub) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		return slices.ContainsFunc(re.Sub, matchesEmpty)
	}
	return false // a character, a class, any character, no match
}

// loadHashKey reads a hash key file: a regular file (a symbolic link to
// one is followed, as for a mounted secret), mode 0600 or stricter, at
// least minHashKeyLen bytes once surrounding whitespace is trimmed.
// Errors never show the key.
func loadHashKey(path string) ([]byte, error) {
	if path == "" {
		return nil, errors.New("must not be empty")
	}
	b, err := fsutil.ReadSecretFile(path, "a hash key", maxHashKeyFileBytes)
	if err != nil {
		return nil, err
	}
	key := []byte(strings.TrimSpace(string(b)))
	if len(key) < minHashKeyLen {
		return nil, fmt.Errorf("%s holds %d bytes; a hash key needs at least %d", path, len(key), minHashKeyLen)
	}
	return key, nil
}

// Settings is the effective redact policy at one sink for one op.
type Settings struct {
	Enabled     bool
	Patterns    []string
	Keys        []string
	Allow       []string
	HashKeyFile string
}

// DefaultSettings: on, the built-in detectors only, markers without hash.
func DefaultSettings() Settings { return Settings{Enabled: true} }

// Merge returns s with the keys c sets replaced.
func (s Settings) Merge(c auditevent.RedactOverride) Settings {
	if c.Enabled != nil {
		s.Enabled = *c.Enabled
	}
	if c.Patterns != nil {
		s.Patterns = c.Patterns
	}
	if c.Keys != nil {
		s.Keys = c.Keys
	}
	if c.Allow != nil {
		s.Allow = c.Allow
	}
	if c.HashKeyFile != nil {
		s.HashKeyFile = *c.HashKeyFile
	}
	return s
}

// Equal reports whether two settings redact alike.
func (s Settings) Equal(o Settings) bool {
	return s.Enabled == o.Enabled && s.HashKeyFile == o.HashKeyFile &&
		slices.Equal(s.Patterns, o.Patterns) && slices.Equal(s.Keys, o.Keys) && slices.Equal(s.Allow, o.Allow)
}
