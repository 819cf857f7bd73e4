package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestJoinedCookieFlag: curl's -b with its cookie string joined to it
// (-bsid=abc, -b'sid=abc', -b"sid=abc") is cut as -b with a blank is, on
// a line where curl runs; the same form after another command (go test's
// -bench=.) and -b joined to a word without '=' stay.
func TestJoinedCookieFlag(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertCountedCuts(t, r, []countedCut{
		{"curl -bsid=abc https://x", "curl -bsid=[REDACTED:cookie] https://x", 1},
		{"curl -b'sid=abc' https://x", "curl -b'sid=[REDACTED:cookie]' https://x", 1},
		{`curl -b"sid=abc; t=1" https://x`, `curl -b"sid=[REDACTED:cookie]; t=[REDACTED:cookie]" https://x`, 2},
		{`sh -c "/usr/bin/curl -s -bsession.id=abc https://x"`, `sh -c "/usr/bin/curl -s -bsession.id=[REDACTED:cookie] https://x"`, 1},
		{`{"c":"curl -b\"sid=abc\" x"}`, `{"c":"curl -b\"sid=[REDACTED:cookie]\" x"}`, 1},
		{"curl --cookie=sid=abc https://x", "curl --cookie=sid=[REDACTED:cookie] https://x", 1},
	})
	assertKept(t, r,
		"ls -bla /tmp", "grep -b foo f", "tar -bz 20 -cf x.tar d", "gcc -bsomething x.c",
		"go test -bench=. -benchtime=10x ./...", "go build -buildmode=pie -buildvcs=false",
		"curl -bjar.txt https://x", "curl https://x\ngo test -bench=.", "mycurl -bsid=abc",
		"x=-bsid=abc curl", "curl -b= https://x",
	)
}

// TestJoinedCookieFlagInData: the same in data, as an argv element after
// curl (curl as the command or after a wrapper) and inside a shell
// command; the probe passes each.
func TestJoinedCookieFlagInData(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ in, want string }{
		{`{"command":["curl","-bsid=abc","https://x"]}`, `{"command":["curl","-bsid=[REDACTED:cookie]","https://x"]}`},
		{`{"command":["sudo","/usr/bin/curl","-s","-b'sid=abc'"]}`, `{"command":["sudo","/usr/bin/curl","-s","-b'sid=[REDACTED:cookie]'"]}`},
		{`{"command":["curl","--cookie=sid=abc"]}`, `{"command":["curl","--cookie=sid=[REDACTED:cookie]"]}`},
		{`{"command":["sh","-c","curl -bsid=abc https://x"]}`, `{"command":["sh","-c","curl -bsid=[REDACTED:cookie] https://x"]}`},
		{`{"command":["go","test","-bench=."],"cwd":"/curl"}`, `{"command":["go","test","-bench=."],"cwd":"/curl"}`},
		{`{"command":["curl"],"x":["-bsid=abc"]}`, `{"command":["curl"],"x":["-bsid=abc"]}`},
		{`{"command":["curl","-bjar.txt"]}`, `{"command":["curl","-bjar.txt"]}`},
	} {
		d := auditevent.MustParseData(tc.in)
		got, _ := r.Data(d, nil)
		assert.Equal(t, tc.want, got.String())
		if tc.want != tc.in {
			require.True(t, r.MayCut(d), tc.in)
			require.True(t, mayTrigger(tc.in), tc.in)
		}
	}
	for _, s := range []string{`{"command":["ls","-bla"]}`, `{"command":["go","test","-bench=."]}`} {
		assert.False(t, r.MayCut(auditevent.MustParseData(s)), "%s: the probe passes", s)
	}
}
