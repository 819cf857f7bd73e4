package redact

import (
	"strings"
	"testing"

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
	} {
		if !probeHits(s) {
			t.Errorf("%q: the probe finds nothing; the case is no trigger", s)
		}
		if !mayTrigger(s) {
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
	for _, s := range append(redacttest.Argv(), redacttest.Text(), `{"a":"KEY","b":"eyJ"}`) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		may := mayTrigger(s)
		if !may && probeHits(s) {
			t.Fatalf("prefilter ruled out a probe hit in %q", s)
		}
		if want := naiveTrigger(s); may != want {
			t.Fatalf("prefilter says %v, byte by byte %v: %q", may, want, s)
		}
	})
}

// TestTriggerBitsFit: the automaton's patterns fit in its uint64.
func TestTriggerBitsFit(t *testing.T) {
	if n := 3*len(triggerTrigrams) + minTriggerRun; n > 64 {
		t.Fatalf("%d pattern bits", n)
	}
}

// naiveTrigger is mayTrigger's definition, checked byte by byte.
func naiveTrigger(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if run = run + 1; !wordByte[s[i]] {
			run = 0
		}
		if run >= minTriggerRun {
			return true
		}
		for _, g := range triggerTrigrams {
			if i+3 <= len(s) && s[i]|0x20 == g[0] && s[i+1]|0x20 == g[1] && s[i+2]|0x20 == g[2] {
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
