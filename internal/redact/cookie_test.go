package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestCookies: the values of the cookies a Cookie header, curl's -b and
// --cookie and a Set-Cookie header carry are cut; the cookies' names and
// Set-Cookie's attributes stay.
func TestCookies(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertCountedCuts(t, r, []countedCut{
		{"Cookie: session=abc123; theme=dark", "Cookie: session=[REDACTED:cookie]; theme=[REDACTED:cookie]", 2},
		{"> cookie: sid=s%3Axyz.Q1w2\r\n> Accept: */*", "> cookie: sid=[REDACTED:cookie]\r\n> Accept: */*", 1},
		{"Set-Cookie: id=a3fWa; Expires=Thu, 21 Oct 2027 07:28:00 GMT; Path=/; Domain=example.com; Max-Age=3600; Secure; HttpOnly; SameSite=Lax",
			"Set-Cookie: id=[REDACTED:cookie]; Expires=Thu, 21 Oct 2027 07:28:00 GMT; Path=/; Domain=example.com; Max-Age=3600; Secure; HttpOnly; SameSite=Lax", 1},
		{"< set-cookie: __Host-sid=\"q9Zx\"; Path=/", "< set-cookie: __Host-sid=\"[REDACTED:cookie]\"; Path=/", 1},
		{`curl -H "Cookie: a=1; b=2" https://x`, `curl -H "Cookie: a=[REDACTED:cookie]; b=[REDACTED:cookie]" https://x`, 2},
		{`curl -b 'sid=abc; csrftoken=def' https://x`, `curl -b 'sid=[REDACTED:cookie]; csrftoken=[REDACTED:cookie]' https://x`, 2},
		{`curl --cookie "sid=abc" https://x`, `curl --cookie "sid=[REDACTED:cookie]" https://x`, 1},
		{`curl --cookie=sid=abc https://x`, `curl --cookie=sid=[REDACTED:cookie] https://x`, 1},
		{`{"headers": {"Cookie": "sid=abc; lang=en"}}`, `{"headers": {"Cookie": "sid=[REDACTED:cookie]; lang=[REDACTED:cookie]"}}`, 2},
		{`{\"Set-Cookie\":\"sid=abc; Path=/\"}`, `{\"Set-Cookie\":\"sid=[REDACTED:cookie]; Path=/\"}`, 1},
		{"map[Cookie:[sid=abc] Accept:[*/*]]", "map[Cookie:[sid=[REDACTED:cookie]] Accept:[*/*]]", 1},
		{`document.cookie = "sid=abc; path=/; max-age=60";`, `document.cookie = "sid=[REDACTED:cookie]; path=/; max-age=60";`, 1},
		{"Cookie: auth=" + jwt, "Cookie: auth=[REDACTED:jwt]", 1},
	})
	assertKept(t, r,
		"cookie jar", "Set-Cookie header missing", "curl -b cookies.txt -c cookies.txt https://x",
		"error reading cookie: file not found", "git checkout -b feature/cookies", "Cookie: $COOKIE",
		"cookies=3", "the Cookie: header is empty",
	)
}

// TestCookiesInData: header maps and curl's argv in data.
func TestCookiesInData(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ in, want string }{
		{`{"headers":{"Cookie":"sid=abc; lang=en","Set-Cookie":["id=1; Path=/; HttpOnly","x=2"]}}`,
			`{"headers":{"Cookie":"sid=[REDACTED:cookie]; lang=[REDACTED:cookie]","Set-Cookie":["id=[REDACTED:cookie]; Path=/; HttpOnly","x=[REDACTED:cookie]"]}}`},
		{`{"argv":["curl","-b","sid=abc; t=1","https://x"]}`, `{"argv":["curl","-b","sid=[REDACTED:cookie]; t=[REDACTED:cookie]","https://x"]}`},
		{`{"argv":["curl","--cookie","sid=abc","https://x"]}`, `{"argv":["curl","--cookie","sid=[REDACTED:cookie]","https://x"]}`},
		{`{"command":["sh","-c","curl -b sid=abc https://x"]}`, `{"command":["sh","-c","curl -b sid=[REDACTED:cookie] https://x"]}`},
		{`{"argv":["curl","-b","jar.txt"],"cookie":"none"}`, `{"argv":["curl","-b","jar.txt"],"cookie":"none"}`},
	} {
		d := auditevent.MustParseData(tc.in)
		require.True(t, r.MayCut(d), tc.in)
		got, _ := r.Data(d, nil)
		assert.Equal(t, tc.want, got.String())
	}
}

// TestCookiesWholeAndEvery: a quoted cookie value is cut whole, blanks
// included, and every cookie of a list is cut, whether ';', ',' or (in
// Go's header map) a blank separates them.
func TestCookiesWholeAndEvery(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct {
		in, want string
		cuts     int
	}{
		{`Cookie: sid="abc def"`, `Cookie: sid="[REDACTED:cookie]"`, 1},
		{`Cookie: sid="abc def"; t=1`, `Cookie: sid="[REDACTED:cookie]"; t=[REDACTED:cookie]`, 2},
		{`Set-Cookie: sid="a b"; Path=/`, `Set-Cookie: sid="[REDACTED:cookie]"; Path=/`, 1},
		{"Cookie: a=b, c=d", "Cookie: a=[REDACTED:cookie], c=[REDACTED:cookie]", 2},
		{"map[Cookie:[a=b c=d] Accept:[*/*]]", "map[Cookie:[a=[REDACTED:cookie] c=[REDACTED:cookie]] Accept:[*/*]]", 2},
		{`Cookie: sid="abc; t=1`, `Cookie: sid="[REDACTED:cookie]; t=[REDACTED:cookie]`, 2},
		{`Cookie: a="b Cookie: c="d`, `Cookie: a="[REDACTED:cookie] Cookie: c="[REDACTED:cookie]`, 2},
	} {
		var c Counts
		got, _ := r.String(tc.in, &c)
		assert.Equal(t, tc.want, got)
		assert.Equal(t, tc.cuts, c.Total(), "%q: counts %v", tc.in, c)
	}
}
