package e2e

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResentSpanWithoutSeqsIsAnExactCopy: an OTLP client that resends a
// request (it timed out) sends the Python SDK's span, which carries no seq
// attributes, twice. The file holds one start and two exact copies of the
// finish, which verify --allow-duplicates accepts.
func TestResentSpanWithoutSeqsIsAnExactCopy(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	otlpAddr := freeAddr(t)
	audit := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", dir, collectorYAML{otlpAddr: otlpAddr, exporter: "file:\n  path: " + audit}.String(), otlpAddr)
	client := &http.Client{Timeout: 10 * time.Second}
	for range 2 {
		resp, err := client.Post("http://"+otlpAddr+"/v1/traces", "application/json", strings.NewReader(pythonToolSpan))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	col.stop(t)

	_, lines := readEvents(t, audit)
	require.Len(t, lines, 3, "the start once, the finish twice")
	assert.Contains(t, lines[0], `"phase":"start","seq":1,`)
	assert.Contains(t, lines[1], `"phase":"finish","seq":2,`)
	assert.Equal(t, lines[1], lines[2])
	code, out := runCLI(t, "verify", "--allow-duplicates", audit)
	require.Equal(t, 0, code, "verify --allow-duplicates:\n%s", indent(out))
}
