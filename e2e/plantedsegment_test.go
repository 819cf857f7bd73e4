package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// TestPlantedFutureSegmentIsPassedOver: a file named as a segment in the
// year 2999, put beside a sealed, rotating audit file, is not followed by
// the collector's segment names, is logged once at WARN, and causes no
// ERROR; the log's own segments are all sealed.
func TestPlantedFutureSegmentIsPassedOver(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	keyPath, _ := keygen(t, dir)
	addr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", dir, rotationConfig(addr, auditPath, keyPath), addr)
	client := &http.Client{Timeout: 30 * time.Second}
	body, _ := crashBatch(0)
	require.True(t, postBatch(client, addr, body))
	planted := filepath.Join(filepath.Dir(auditPath), "events-29991231T000000Z-000099.jsonl")
	require.NoError(t, os.WriteFile(planted, []byte("{\"planted\":true}\n"), 0o600))
	for b := 1; b < 40; b++ {
		body, _ := crashBatch(b)
		require.True(t, postBatch(client, addr, body), "batch %d refused", b)
		time.Sleep(100 * time.Millisecond)
	}
	col.stop(t)

	segs, err := filesink.Segments(auditPath)
	require.NoError(t, err)
	own := 0
	for _, s := range segs {
		if s.Plain == planted {
			continue
		}
		own++
		require.NotContains(t, filepath.Base(s.Path), "2999", "named after the planted file")
	}
	require.GreaterOrEqual(t, own, 2, "the load spanned several seconds: several rotations")
	log := string(mustRead(t, col.log))
	require.Equal(t, 1, strings.Count(log, "dated ahead of the clock"), "%s", tail([]byte(log), 4000))
	require.Contains(t, log, planted)
	require.NotContains(t, log, "\terror\t", "%s", tail([]byte(log), 4000))
}
