package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clientEvents are the canonical start and finish lines of ops operations
// of one client's session, as the Python HttpProxySink posts them.
func clientEvents(client, ops int) []string {
	session := fmt.Sprintf("5e551000-0000-4000-8000-%012x", client)
	var out []string
	for op := range ops {
		span := fmt.Sprintf("sandbox_op_%016x%016x", client, op)
		data := fmt.Sprintf(`{"path":"/workspace/f%d.txt"}`, op)
		id := func(phase int) string { return fmt.Sprintf("7d4c1b2a-%04x-4000-8000-%012x", client, 2*op+phase) }
		out = append(out,
			`{"data":`+data+`,"event_id":"`+id(0)+`","op":"read","parent_span_id":null,"phase":"start","seq":`+fmt.Sprint(2*op+1)+`,"session_id":"`+session+`","span_id":"`+span+`","trace_id":null,"ts":"2026-03-14T15:09:26.535897Z","version":1}`,
			`{"data":`+data+`,"duration_ms":2.5,"error_code":null,"error_message":null,"error_retryable":null,"error_type":null,"event_id":"`+id(1)+`","ok":true,"op":"read","parent_span_id":null,"phase":"finish","seq":`+fmt.Sprint(2*op+2)+`,"session_id":"`+session+`","span_id":"`+span+`","stderr":null,"stdout":null,"trace_id":null,"ts":"2026-03-14T15:09:26.538397Z","version":1}`)
	}
	return out
}

// TestConcurrentSingleEventsEachWrittenOnce: many sandbox sessions post
// their events one per request at once, as Python HttpProxySinks do, to a
// collector without a batch processor, so every request is a batch of its
// own and concurrent batches share the file's syncs (fsync batch, the
// default). Every acknowledged event is in the file exactly once, byte for
// byte as sent, and verify passes.
func TestConcurrentSingleEventsEachWrittenOnce(t *testing.T) {
	requireE2E(t)
	const clients, ops = 32, 10
	dir := t.TempDir()
	addr := freeAddr(t)
	audit := filepath.Join(dir, "audit", "events.jsonl")
	cfg := collectorYAML{sandboxAddr: addr, exporter: "file:\n  path: " + audit}.String()
	col := startCollector(t, "collector", dir, cfg, addr)

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		sent []string
	)
	httpClient := &http.Client{Timeout: 30 * time.Second}
	for c := range clients {
		wg.Go(func() {
			for _, ev := range clientEvents(c, ops) {
				resp, err := httpClient.Post("http://"+addr+"/v1/sandbox/events", "application/json", strings.NewReader(ev))
				if !assert.NoError(t, err) {
					return
				}
				_ = resp.Body.Close()
				if !assert.Equal(t, http.StatusOK, resp.StatusCode) {
					return
				}
				mu.Lock()
				sent = append(sent, ev)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	col.stop(t)
	require.Len(t, sent, 2*clients*ops)

	_, lines := readEvents(t, audit)
	sort.Strings(sent)
	sort.Strings(lines)
	require.Equal(t, sent, lines, "the file must hold each acknowledged event once, as sent")
	out := requireVerifies(t, audit)
	assert.Contains(t, out, fmt.Sprintf("lines=%d events=%d sessions=%d open=0 problems=0", 2*clients*ops, 2*clients*ops, clients))
}
