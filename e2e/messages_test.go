package e2e

import (
	"bytes"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestRefusalsSayWhatIsValid: the built collector's event intake answers
// an empty object by naming every missing field, an unknown op by listing
// the valid ones, and deep nesting as nesting depth.
func TestRefusalsSayWhatIsValid(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	cfg := collectorYAML{sandboxAddr: addr, exporter: "file:\n  path: " + filepath.Join(dir, "audit.jsonl")}.String()
	col := startCollector(t, "collector", dir, cfg, addr)
	client := &http.Client{Timeout: 10 * time.Second}
	event := func(op, data string) string {
		return `{"version":1,"session_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","seq":1,"op":"` + op +
			`","phase":"start","span_id":"s","data":` + data + `}`
	}
	for name, tc := range map[string]struct {
		body string
		want string
	}{
		"empty object": {`{}`, `phase: missing (must be "start" or "finish"); also missing: session_id, seq, op, span_id`},
		"unknown op":   {event("frobnicate", `{}`), "must be one of: " + strings.Join(auditevent.Ops(), ", ")},
		"deep nesting": {event("exec", strings.Repeat(`{"a":`, 300)+"1"+strings.Repeat("}", 300)), "data: JSON nesting depth over 200 levels"},
	} {
		resp, err := client.Post("http://"+addr+"/v1/sandbox/events", "application/json", bytes.NewReader([]byte(tc.body)))
		require.NoError(t, err, name)
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", name, b)
		assert.Contains(t, string(b), tc.want, name)
		assert.NotContains(t, string(b), "not JSON object text", name)
	}
	col.stop(t)
}
