package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBearerTokenAuthBothWays: the distribution carries the contrib
// bearertokenauth extension, so the receiver's and the exporter's `auth`
// keys work in it: a sink posting without the token gets 401 and nothing
// is written; with it the event reaches the file and, with the exporter's
// own token, the HTTP endpoint. Neither token reaches the collector's log.
func TestBearerTokenAuthBothWays(t *testing.T) {
	requireE2E(t)
	const inToken, outToken = "in-secret-7f3a", "out-secret-91c2"
	var mu sync.Mutex
	var gotAuth []string
	var gotBodies []string
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		gotBodies = append(gotBodies, string(b))
	}))
	t.Cleanup(endpoint.Close)

	dir := t.TempDir()
	sandboxAddr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	cfg := fmt.Sprintf(`extensions:
  bearertokenauth/in:
    token: %q
  bearertokenauth/out:
    token: %q
receivers:
  sandboxaudit:
    endpoint: %s
    auth:
      authenticator: bearertokenauth/in
exporters:
  sandboxaudit:
    file:
      path: %s
    http:
      endpoint: %s/ingest
      auth:
        authenticator: bearertokenauth/out
service:
  extensions: [bearertokenauth/in, bearertokenauth/out]
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [sandboxaudit]
      exporters: [sandboxaudit]
`, inToken, outToken, sandboxAddr, auditPath, endpoint.URL)
	col := startCollector(t, "auth", dir, cfg, sandboxAddr)

	url := "http://" + sandboxAddr + "/v1/sandbox/events"
	client := &http.Client{Timeout: 10 * time.Second}
	send := func(token string) int {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(proxyEvents[0]))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusUnauthorized, send(""))
	assert.Equal(t, http.StatusUnauthorized, send(outToken))
	_, err := os.Stat(auditPath)
	assert.True(t, os.IsNotExist(err) || countLines(t, auditPath) == 0, "nothing written for a refused request")

	require.Equal(t, http.StatusOK, send(inToken))
	require.Equal(t, 1, countLines(t, auditPath))
	mu.Lock()
	assert.Equal(t, []string{"Bearer " + outToken}, gotAuth, "the exporter authenticates with its own token")
	require.Len(t, gotBodies, 1)
	assert.Equal(t, proxyEvents[0]+"\n", gotBodies[0])
	mu.Unlock()

	col.stop(t)
	log := string(mustRead(t, col.log))
	assert.NotContains(t, log, inToken)
	assert.NotContains(t, log, outToken)
}
