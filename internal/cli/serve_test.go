package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/syncbuf"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

func startView(t *testing.T, cfg webview.Config) *httptest.Server {
	t.Helper()
	srv, err := webview.New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs
}

func get(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

func TestServePagesEscapeAndPage(t *testing.T) {
	var evs []auditevent.Event
	for k := range 5 {
		s, f := op(sessionA, "exec", fmt.Sprintf("span-%d", k), int64(2*k+1), int64(2*k+2))
		s.Data = auditevent.MustParseData(`{"command":["sh","-c","<img src=x onerror=alert(1)> <script>alert(2)</script>"]}`)
		evs = append(evs, s, f)
	}
	p := writeFile(t, "events.jsonl", canonLines(evs...))
	hs := startView(t, webview.Config{Sources: []string{p}, TraceURL: "http://127.0.0.1:16686/trace/{trace_id}?uiFind={span_id}"})

	code, h, body := get(t, hs.URL+"/")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "default-src 'none'; style-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
		h.Get("Content-Security-Policy"))
	assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	assert.Contains(t, body, sessionA.String())
	assert.NotContains(t, body, "<script", "no script element, inline or not")
	assert.Contains(t, body, `href="http://127.0.0.1:16686/trace/4bf92f3577b34da6a3ce929d0e0e4736?uiFind="`)

	code, _, body = get(t, hs.URL+"/session/"+sessionA.String()+"?limit=2&offset=2")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "&lt;img src=x onerror=alert(1)&gt; &lt;script&gt;alert(2)&lt;/script&gt;")
	assert.NotContains(t, body, "<img")
	assert.NotContains(t, body, "<script")
	assert.Equal(t, 2, strings.Count(body, `<svg class="bar"`), "a page of 2")
	assert.Contains(t, body, `/session/`+sessionA.String()+`/op/2"`, "offset 2: operations 2 and 3")
	assert.Contains(t, body, `/session/`+sessionA.String()+`/op/3"`)
	assert.Contains(t, body, "offset=4", "a next link")
	assert.Contains(t, body, "offset=0", "a previous link")

	code, _, body = get(t, hs.URL+"/session/"+sessionA.String()+"/op/1")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `href="http://127.0.0.1:16686/trace/4bf92f3577b34da6a3ce929d0e0e4736?uiFind=span-1"`)
	assert.Contains(t, body, "&#34;seq&#34;:3", "the start line, escaped")
	assert.Contains(t, body, "&#34;seq&#34;:4", "the finish line, escaped")

	for path, want := range map[string]int{
		"/session/nope":                                 http.StatusBadRequest,
		"/session/" + sessionB.String():                 http.StatusNotFound,
		"/session/" + sessionA.String() + "?limit=0":    http.StatusBadRequest,
		"/session/" + sessionA.String() + "?limit=5000": http.StatusBadRequest,
		"/session/" + sessionA.String() + "?offset=-1":  http.StatusBadRequest,
		"/session/" + sessionA.String() + "/op/99":      http.StatusNotFound,
		"/?sort=nope":            http.StatusBadRequest,
		"/?sort=failures&desc=1": http.StatusOK,
		"/static/style.css":      http.StatusOK,
		"/nothing-here":          http.StatusNotFound,
	} {
		code, _, body := get(t, hs.URL+path)
		assert.Equal(t, want, code, "%s: %s", path, body)
	}
	resp, err := http.Post(hs.URL+"/", "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestServeIntegrityStatus(t *testing.T) {
	sealed, _, pub := sealedFixture(t)
	key, err := integrity.LoadVerifierKey(pub)
	require.NoError(t, err)
	plain := writeFile(t, "plain.jsonl", canonLines(op(sessionB, "exec", "x", 1, 2)))

	hs := startView(t, webview.Config{Sources: []string{sealed, plain}, Key: key})
	_, _, body := get(t, hs.URL+"/")
	assert.Contains(t, body, "through checkpoint #2: lines 1-8 of 8 are sealed")
	assert.Contains(t, body, "no signed checkpoints beside this file")

	unchecked := startView(t, webview.Config{Sources: []string{sealed}})
	_, _, body = get(t, unchecked.URL+"/")
	assert.Contains(t, body, "start serve with --key NAME.pub")

	ls := fileLines(t, sealed)
	ls[2] = strings.Replace(ls[2], `"read"`, `"exec"`, 2)
	writeLines(t, sealed, ls)
	tampered := startView(t, webview.Config{Sources: []string{sealed}, Key: key})
	_, _, body = get(t, tampered.URL+"/")
	assert.Contains(t, body, "seal-failed")
}

func TestServeListenRules(t *testing.T) {
	p := writeFile(t, "events.jsonl", canonLines(op(sessionA, "exec", "x", 1, 2)))
	r := run(t, "", "serve", "--listen", "0.0.0.0:0", p)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "not a loopback address")
	assert.Contains(t, r.stderr, "--allow-remote")
	// The view takes a token, but over plain HTTP: reaching it is not
	// enough, reading its traffic is.
	assert.Contains(t, r.stderr, "token")
	assert.NotContains(t, r.stderr, "anyone who reaches it")
	r = run(t, "", "serve", "--help")
	assert.NotContains(t, r.stderr+r.stdout, "anyone who reaches it")
	r = run(t, "", "serve", "--listen", "example.com:80", p)
	assert.Equal(t, exitUsage, r.code)
	// ":8089" (an unset ${HOST}) names no host: the refusal says which
	// to write, not that "" is no IP address.
	r = run(t, "", "serve", "--allow-remote", "--listen", ":8089", p)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `--listen: ":8089" names no host; write 127.0.0.1:8089, or 0.0.0.0:8089 for every interface`)
	r = run(t, "", "serve", "--trace-url", "javascript:alert(1)/{trace_id}", p)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--trace-url")

	// Loopback: the view answers, and refuses a Host it does not go by
	// (DNS rebinding).
	printed, stop := serving(t, p)
	browser := viewerClient(t)
	resp, err := browser.Get(printed)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	req, err := http.NewRequest(http.MethodGet, printed, nil)
	require.NoError(t, err)
	req.Host = "attacker.example:80"
	resp, err = browser.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)
	code, _ := stop()
	assert.Equal(t, exitOK, code)

	// Another address with --allow-remote: served, with a warning.
	ctx, cancel := context.WithCancel(context.Background())
	errOut := &syncbuf.Buffer{}
	done := make(chan int)
	go func() {
		done <- Run(ctx, []string{"serve", "--listen", "0.0.0.0:0", "--allow-remote", p}, Streams{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: errOut})
	}()
	for i := 0; i < 200 && !strings.Contains(errOut.String(), "WARNING"); i++ {
		time.Sleep(25 * time.Millisecond)
	}
	assert.Contains(t, errOut.String(), "WARNING: listening on")
	cancel()
	assert.Equal(t, exitOK, <-done)
}
