package redact

import (
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// probeHits runs the full probe, without the prefilter.
func probeHits(s string) bool {
	sc := scanner{s: s, probe: true}
	sc.scan()
	return sc.hit
}

func TestPrefilterPassesEveryTrigger(t *testing.T) {
	for _, s := range []string{
		`"DB_PASSWORD":"p"`, `"x-Secret":"v"`, `"TOKEN":"v"`, `"api_key":"v"`, `"Credentials":"v"`,
		`"Authorization":"Basic abc"`, `"say bearer abcdefabcdef12345678"`, `"https://u:p@h"`,
		`"-----BEGIN RSA PRIVATE KEY-----\nx"`, `"eyJhbGciOi.eyJzdWIiOi.sig"`,
		`"xoxb-12345678901"`, `{"a":{"db password":"x"}}`, `{"a":{"db.Secret":"x"}}`, `"AKIAABCDEFGHIJKLMNOP"`, `["--passwd","x"]`,
		`{"Cookie":"a=b"}`, `"set-cookie: a=b"`, `["curl","-b","a=b"]`, `["--cookie","a=b"]`, `"curl -b a=b"`,
		`["mysql","-pX"]`, `["sshpass","-p","x"]`, `"redis-cli -a x"`, `["curl","--user","a:b"]`, `"curl -u a:b"`, `"/c?sv=1&sig=a"`,
		`"https%3A%2F%2Fa%3Ab%40h"`, `"https%253A%252F%252Fa%253Ab%2540h"`,
		`"db:5432:prod:app:pw"`, `"h:5432:_db:app:pw"`, `"*:*:*:app:pw"`, `"h:*:Db:app:pw"`,
		`"SharedAccessSignature sr=h.azure-devices.net&sig=a&se=1&skn=k"`,
	} {
		if !probeHits(s) {
			t.Errorf("%q: the probe finds nothing; the case is no trigger", s)
		}
		if !mayTrigger(s) && !mayHaveToolFlag(s) {
			t.Errorf("%q: prefilter rules out a hit", s)
		}
	}
	for _, s := range []string{
		`{"command":["python","-m","pytest","-q","tests/test_module_5.py"],"exit_code":0,"shell":false,"timeout_s":30,"user":null}`,
		`{"path":"/workspace/src/main.go","bytes":1024}`,
	} {
		if mayTrigger(s) {
			t.Errorf("%q: prefilter passes clean text", s)
		}
	}
}

// FuzzPrefilter: where the prefilter rules text out, the full probe finds
// nothing either.
func FuzzPrefilter(f *testing.F) {
	// The Kelvin sign folds to k in Unicode: names with it are no trigger.
	seeds := []string{`{"a":"KEY","b":"eyJ"}`, "{\"to\u212aen\":\"abcdef\"}", "{\"\u212aey\":\"v\"}", `{"d":"h:5432:db:u:p"}`, `["*:*:*:u:p"]`}
	for _, s := range append(redacttest.Argv(), append(seeds, redacttest.Text())...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		may := mayTrigger(s)
		if !may && !mayHaveToolFlag(s) && probeHits(s) {
			t.Fatalf("prefilter ruled out a probe hit in %q", s)
		}
		if want := naiveTrigger(s); may != want {
			t.Fatalf("prefilter says %v, byte by byte %v: %q", may, want, s)
		}
	})
}

// TestTriggerBitsFit: the automaton's patterns and their sinks fit in its
// uint64.
func TestTriggerBitsFit(t *testing.T) {
	if n := 4*len(triggerTrigrams) + minTriggerRun + 1 + 2; n > 64 {
		t.Fatalf("%d pattern bits", n)
	}
	// A bit shifted past the top is lost without a word: each pattern
	// must still own its start, its last bit and its sink.
	patterns := len(triggerTrigrams) + 2
	if got := bits.OnesCount64(triggerSet.starts); got != patterns {
		t.Errorf("%d start bits, want %d", got, patterns)
	}
	if got := bits.OnesCount64(triggerSet.hits); got != 2*patterns {
		t.Errorf("%d last and sink bits, want %d", got, 2*patterns)
	}
}

// naiveTrigger is mayTrigger's definition, checked byte by byte.
func naiveTrigger(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if run = run + 1; !wordByte[s[i]] {
			run = 0
		}
		if run >= minTriggerRun || s[i] == '\\' {
			return true
		}
		for _, g := range triggerTrigrams {
			if i+3 <= len(s) && strings.IndexByte(g[0], s[i]|0x20) >= 0 && strings.IndexByte(g[1], s[i+1]|0x20) >= 0 &&
				strings.IndexByte(g[2], s[i+2]|0x20) >= 0 {
				return true
			}
		}
	}
	return false
}

// TestDataCutsUnderDottedOrSpacedName: a member name that is not one word
// still marks its value secret through the probe and the walk.
func TestDataCutsUnderDottedOrSpacedName(t *testing.T) {
	r, err := New(Settings{Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{`{"db password":"hunter2"}`, `{"a":{"db.secret":"hunter2"}}`, `{"x":["y"],"AA PASSWORD":"0"}`} {
		d, err := auditevent.ParseData([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		out, changed := r.Data(d, nil)
		if !changed || strings.Contains(out.String(), "hunter2") || !strings.Contains(out.String(), "[REDACTED:") {
			t.Errorf("%s -> %s (changed %v)", in, out.String(), changed)
		}
	}
}

// TestPrefilterAtEveryOffset holds the automaton to its byte-by-byte
// definition where its sinks matter: every trigram in every case, runs
// around minTriggerRun, a backslash and multi-byte UTF-8, at every offset
// of texts up to two blocks of sixteen and a tail, in backgrounds of word
// and non-word bytes; then random texts over an alphabet rich in trigger
// bytes.
func TestPrefilterAtEveryOffset(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := mayTrigger(s), naiveTrigger(s); got != want {
			t.Fatalf("mayTrigger(%q) = %v, byte by byte %v", s, got, want)
		}
	}
	pieces := []string{`\`, "é", "\u212a", "\u212aey", "to\u212aen"} // multi-byte UTF-8, Kelvin sign folding to k
	seen := map[string]bool{}
	for _, g := range triggerTrigrams {
		for _, a := range []byte(g[0]) {
			for _, b := range []byte(g[1]) {
				for _, c := range []byte(g[2]) {
					for mask := range 8 {
						p := []byte{a, b, c}
						for k := range p {
							if mask>>k&1 != 0 {
								p[k] = byte(unicode.ToUpper(rune(p[k])))
							}
						}
						if !seen[string(p)] { // a byte without case gives one piece
							seen[string(p)] = true
							pieces = append(pieces, string(p))
						}
					}
				}
			}
		}
	}
	for n := minTriggerRun - 2; n <= minTriggerRun+1; n++ {
		pieces = append(pieces, strings.Repeat("a", n), strings.Repeat("_9-Z", n)[:n])
	}
	for _, bg := range []byte{'.', 'x', ' ', '"', 0x00, 0x0d, 0x40, 0x7f, 0xe5} {
		for _, p := range pieces {
			for size := len(p); size <= len(p)+33; size++ {
				for at := 0; at+len(p) <= size; at++ {
					s := []byte(strings.Repeat(string(bg), size))
					copy(s[at:], p)
					check(string(s))
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "pasecrtokyubjPASECRTOKYUBJ-:/_09 .\"\\\x00\x0d@\x7f\xe5\xc3\xa9\xe2\x84\xaa"
	for range 200_000 {
		s := make([]byte, rng.IntN(70))
		for k := range s {
			s[k] = alphabet[rng.IntN(len(alphabet))]
		}
		check(string(s))
	}
}

// FuzzStringPrefilter: where the prefilter rules text out, String's full
// scan (which String then skips) cuts nothing either.
func FuzzStringPrefilter(f *testing.F) {
	seeds := []string{"DB_PASSWORD=hunter2", "to\u212aen=abcdef", "https://u:p@h", "mkdir -p x", "%70assword=x", "plain text"}
	for _, s := range append(redacttest.Argv(), append(seeds, redacttest.Text())...) {
		f.Add(s)
	}
	r, err := New(Settings{Enabled: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !r.ruledOut(s) {
			return
		}
		if out, changed := r.redact(s, 0, scanOnly, nil); changed {
			t.Fatalf("prefilter ruled out a cut: %q -> %q", s, out)
		}
	})
}
