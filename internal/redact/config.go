package redact

import (
	"errors"
	"fmt"
	"regexp"
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
	if re.MatchString("") {
		return nil, fmt.Errorf("%q matches the empty string", p)
	}
	return re, nil
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
