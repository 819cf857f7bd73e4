package webview

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// At most maxPages pages are built and sent at once: a request beyond
// them waits for a slot, so many requests at once cannot each take a
// page's memory (an operation's lines) together.
func TestServeBuildsAtMostMaxPagesAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(auditLine(1, "start", "ls")+auditLine(2, "finish", "")), 0o600))
	srv, err := New(context.Background(), Config{Sources: []string{path}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	building, waiting := make(chan struct{}, maxPages+1), make(chan struct{}, maxPages+1)
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	srv.building = func() { building <- struct{}{}; <-release }
	srv.waiting = func() { waiting <- struct{}{} }
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(free) // runs first: no handler stays blocked

	codes := make(chan int, maxPages+1)
	for range maxPages + 1 {
		go func() {
			resp, err := http.Get(hs.URL + "/session/6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b/op/0")
			if err != nil {
				codes <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	for range maxPages {
		receive(t, building, "a page being built")
	}
	receive(t, waiting, "the request beyond the bound waiting")
	assert.Empty(t, building, "no more than maxPages pages are built at once")
	free()
	for range maxPages + 1 {
		assert.Equal(t, http.StatusOK, receiveCode(t, codes))
	}
}

func receive(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(30 * time.Second):
		t.Fatalf("no sign of %s within 30 s", what)
	}
}

func receiveCode(t *testing.T, c <-chan int) int {
	t.Helper()
	select {
	case code := <-c:
		return code
	case <-time.After(30 * time.Second):
		t.Fatal("no answer within 30 s")
	}
	return 0
}
