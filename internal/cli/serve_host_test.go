package cli

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// A browser leaves the port out of the Host header when it is the
// scheme's default: a loopback view on port 80 answers to its bare
// loopback names, and still to no other.
func TestServeOnPort80AcceptsTheHostWithoutAPort(t *testing.T) {
	assertHostStatuses(t, func(srv *webview.Server) {
		srv.AllowHosts(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80})
	}, map[string]int{
		"127.0.0.1": http.StatusOK, "localhost": http.StatusOK, "[::1]": http.StatusOK,
		"127.0.0.1:80": http.StatusOK, "localhost:80": http.StatusOK,
		"attacker.example": http.StatusMisdirectedRequest, "attacker.example:80": http.StatusMisdirectedRequest,
		"127.0.0.1:8080": http.StatusMisdirectedRequest,
	})
}

// assertHostStatuses serves a one-operation trail, lets allow set the
// hosts the view answers to, and checks the status each Host header gets.
func assertHostStatuses(t *testing.T, allow func(*webview.Server), want map[string]int) {
	t.Helper()
	p := writeFile(t, "events.jsonl", canonLines(op(sessionA, "exec", "x", 1, 2)))
	srv, err := webview.New(context.Background(), webview.Config{Sources: []string{p}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	allow(srv)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	for host, code := range want {
		req, err := http.NewRequest(http.MethodGet, hs.URL+"/", nil)
		require.NoError(t, err)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, code, resp.StatusCode, host)
	}
}
