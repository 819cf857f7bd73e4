package redact

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// FuzzRedact: redacting never panics, keeps valid UTF-8 valid, and is
// idempotent: a redacted string has nothing left to cut. The seed corpus is
// in testdata/fuzz/FuzzRedact, plus the samples.
func FuzzRedact(f *testing.F) {
	for _, s := range append(append(redacttest.Argv(), redacttest.Text()), encodedSeeds...) {
		f.Add(s)
	}
	r, err := New(Settings{Enabled: true, Patterns: []string{redacttest.UserPattern}, Keys: []string{redacttest.UserKey}})
	if err != nil {
		f.Fatal(err)
	}
	// hashed markers hold a ':' and hex digits: they are never cut again
	// either
	key := filepath.Join(f.TempDir(), "hash.key")
	if err := os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef"), 0o600); err != nil {
		f.Fatal(err)
	}
	hashed, err := New(Settings{Enabled: true, HashKeyFile: key})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range []*Redactor{r, hashed} {
			once, _ := r.String(s, nil)
			if utf8.ValidString(s) && !utf8.ValidString(once) {
				t.Fatalf("valid %q became invalid %q", s, once)
			}
			twice, changed := r.String(once, nil)
			if changed {
				t.Fatalf("not idempotent:\n in:    %q\n once:  %q\n twice: %q", s, once, twice)
			}
		}
	})
}

// encodedSeeds are the percent-encoded forms, a few cut short.
var encodedSeeds = []string{
	"q=%70assword%3Dpw%26x", "pass%77ord=pw", "%2570a%2573sword%25253Dpw", "h=Authorization%3A+Bearer+t%2Bk%3D",
	"Cookie%3A%20a%3D1%3B%20b%3D2", "Set-Cookie%253A%2520a%253D1", "%3Fsv%3D1%26sig%3Da%252B", "%26sig%3D", "%7", "%257", "a%2525",
	"v=%7B%22password%22%3A%22p%5C%22w%22%7D", "%257B%2522token%2522%253A%2522t", "%22pin%22%3A1%7D%22password%22%3A",
	"q=password%3A%20pw%0Ax", "%2C%20password%3A%20%22pw", "%22X-Api-Key%3A+k%22", "apiKey%3A%3D%27k%27",
}

// FuzzRedactData: a redacted data object is still canonical JSON,
// redacting it again changes nothing, and the probe that lets clean data
// skip the walk never skips a cut.
func FuzzRedactData(f *testing.F) {
	for _, s := range []string{
		`{"argv":["aws","--secret-access-key","x"],"env":{"DB_PASSWORD":"p"}}`,
		`{"a":[["--token"],"v"],"b":{"c":{"api_key":[1,"k",null]}},"d":"Authorization: Bearer abcdefabcdef12345"}`,
		`{"é":"` + "\\u00e9 https://u:p@h" + `","n":1e400}`,
		`{"data":"db:5432:prod:app:pw","p":"h:*:Db:u:p"}`, `{"a":"*:*:*:u:p"}`,
		`{"h":{"Authorization: Bearer abcdefabcdef12345":1,"[REDACTED:bearer_token]":2},"DB_PASSWORD=p":[]}`,
	} {
		f.Add(s)
	}
	for _, s := range encodedSeeds {
		f.Add(`{"u":"` + s + `"}`)
	}
	r, err := New(Settings{Enabled: true, Patterns: []string{redacttest.UserPattern}, Keys: []string{redacttest.UserKey}})
	if err != nil {
		f.Fatal(err)
	}
	builtin, err := New(Settings{Enabled: true, Keys: []string{redacttest.UserKey}})
	if err != nil {
		f.Fatal(err)
	}
	noNames, err := New(Settings{Enabled: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := auditevent.ParseData([]byte(s))
		if err != nil {
			return
		}
		// the probe that skips the walk never skips a cut, with or
		// without the prefilter that runs when there are no user names
		for _, p := range []*Redactor{builtin, noNames} {
			if !p.mayCut(d.Bytes()) {
				if cut, changed := p.walk(d, nil); changed {
					t.Fatalf("probe missed a cut: %s -> %s", d.String(), cut.String())
				}
				if cut, changed := d.MapKeys(func(k string) (string, bool) { return p.String(k, nil) }); changed {
					t.Fatalf("probe missed a cut in a name: %s -> %s", d.String(), cut.String())
				}
			}
		}
		once, _ := r.Data(d, nil)
		again, err := auditevent.ParseData(once.Bytes())
		if err != nil || again.String() != once.String() {
			t.Fatalf("not canonical: %q (%v)", once.String(), err)
		}
		if twice, changed := r.Data(once, nil); changed {
			t.Fatalf("not idempotent:\n once:  %s\n twice: %s", once.String(), twice.String())
		}
	})
}
