package redact

import (
	"testing"
	"unicode/utf8"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// FuzzRedact: redacting never panics, keeps valid UTF-8 valid, and is
// idempotent: a redacted string has nothing left to cut. The seed corpus is
// in testdata/fuzz/FuzzRedact, plus the samples.
func FuzzRedact(f *testing.F) {
	for _, s := range append(redacttest.Argv(), redacttest.Text()) {
		f.Add(s)
	}
	r, err := New(Settings{Enabled: true, Patterns: []string{redacttest.UserPattern}, Keys: []string{redacttest.UserKey}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once, _ := r.String(s, nil)
		if utf8.ValidString(s) && !utf8.ValidString(once) {
			t.Fatalf("valid %q became invalid %q", s, once)
		}
		twice, changed := r.String(once, nil)
		if changed {
			t.Fatalf("not idempotent:\n in:    %q\n once:  %q\n twice: %q", s, once, twice)
		}
	})
}
