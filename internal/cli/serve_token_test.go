package cli

import (
	"context"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/syncbuf"
)

// A loopback port is open to every user of the machine, while the file
// sink writes the trail for its owner alone (0600): the view answers only
// to a browser that opened the address serve printed, which carries a
// token; another user who finds the port, or guesses the token, gets 403.
func TestServeAnswersOnlyWithItsToken(t *testing.T) {
	p := writeFile(t, "events.jsonl", canonLines(op(sessionA, "exec", "x", 1, 2)))
	printed, _ := serving(t, p)
	origin, query, ok := strings.Cut(printed, "/?token=")
	require.True(t, ok, "serve prints its address with a token: %s", printed)
	require.GreaterOrEqual(t, len(query), 26, "the token is 128 bits or more")

	for _, page := range []string{"/", "/session/" + sessionA.String(), "/session/" + sessionA.String() + "/op/0", "/static/style.css", "/?token=" + query + "x", "/?token="} {
		code, _, body := get(t, origin+page)
		assert.Equal(t, http.StatusForbidden, code, "%s without the token", page)
		assert.NotContains(t, body, sessionA.String(), page)
		assert.NotContains(t, body, query, "%s: the token is not told", page)
	}

	// The token is traded for the cookie by a redirect to the same page,
	// which a path of two slashes, or a backslash a browser reads as a
	// slash, cannot turn to another host.
	noFollow := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for page, want := range map[string]string{"/?sort=ops&token=" + query: "/?sort=ops", "//attacker.example/?token=" + query: "/attacker.example",
		"/%5Cattacker.example/?token=" + query: "/%5Cattacker.example"} {
		resp, err := noFollow.Get(origin + page)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, page)
		assert.Equal(t, want, resp.Header.Get("Location"), page)
		cookie := resp.Header.Get("Set-Cookie")
		assert.Contains(t, cookie, "HttpOnly", page)
		assert.Contains(t, cookie, "SameSite=Lax", page)
		assert.Contains(t, cookie, "Path=/", page)
	}

	browser := viewerClient(t)
	resp, err := browser.Get(printed)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "/", resp.Request.URL.RequestURI(), "the token leaves the address bar")
	for _, page := range []string{"/session/" + sessionA.String(), "/session/" + sessionA.String() + "/op/0", "/static/style.css"} {
		resp, err := browser.Get(origin + page)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%s with the cookie", page)
	}
}

// printedAddress waits (bounded) for the address serve prints on out,
// token included.
func printedAddress(t *testing.T, out, errOut *syncbuf.Buffer) string {
	t.Helper()
	for range 400 {
		if _, rest, ok := strings.Cut(out.String(), "http://"); ok {
			addr, _, _ := strings.Cut(rest, " ")
			return "http://" + addr
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("serve printed no address: %s %s", out.String(), errOut.String())
	return ""
}

// viewerClient is a browser's client: it keeps the view's cookie.
func viewerClient(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

// TestServeStopsWithAConnectionThatSentNothing: a browser opens spare
// connections it may never send a request on; stopping serve closes them
// rather than wait for them, and serve exits 0.
func TestServeStopsWithAConnectionThatSentNothing(t *testing.T) {
	p := writeFile(t, "events.jsonl", canonLines(op(sessionA, "exec", "x", 1, 2)))
	printed, stop := serving(t, p)
	u, err := url.Parse(printed)
	require.NoError(t, err)
	spare, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer func() { _ = spare.Close() }()
	// The server has taken the connection once a request on another one
	// is answered: it accepts in order.
	resp, err := viewerClient(t).Get(u.String())
	require.NoError(t, err)
	_ = resp.Body.Close()
	code, stderr := stop()
	assert.Equal(t, exitOK, code, stderr)
}

// serving starts serve on a loopback port for the trail at p and returns
// the address it printed, and stop, which ends it and returns its exit
// code and stderr (at the test's end at the latest).
func serving(t *testing.T, p string) (printed string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"serve", "--listen", "127.0.0.1:0", p}, Streams{Stdin: strings.NewReader(""), Stdout: out, Stderr: errOut})
	}()
	var once sync.Once
	var code int
	stop = func() (int, string) {
		once.Do(func() { cancel(); code = <-done })
		return code, errOut.String()
	}
	t.Cleanup(func() { stop() })
	return printedAddress(t, out, errOut), stop
}
