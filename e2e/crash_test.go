package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// crashEdgeConfig is an edge collector without batch processor or queue
// (the defaults): a 200 means the events are in the spool or delivered.
func crashEdgeConfig(addr, central, spool string) string {
	return fmt.Sprintf(`receivers:
  sandboxaudit:
    endpoint: %s
exporters:
  sandboxaudit:
    timeout: 5s
    retry_on_failure: {enabled: true, initial_interval: 50ms, max_interval: 200ms, max_elapsed_time: 1s}
    http:
      endpoint: http://%s/v1/sandbox/events
      spool: {path: %s, replay_interval: 100ms}
service:
  telemetry: {metrics: {level: none}}
  pipelines:
    logs: {receivers: [sandboxaudit], exporters: [sandboxaudit]}
`, addr, central, spool)
}

func crashCentralConfig(addr, audit string) string {
	return fmt.Sprintf(`receivers:
  sandboxaudit:
    endpoint: %s
exporters:
  sandboxaudit:
    file: {path: %s}
service:
  telemetry: {metrics: {level: none}}
  pipelines:
    logs: {receivers: [sandboxaudit], exporters: [sandboxaudit]}
`, addr, audit)
}

// crashBatch is batch b of the client: 25 operations, a start and a finish
// each, in a session of its own per batch.
func crashBatch(b int) (body []byte, ids []string) {
	session := fmt.Sprintf("00000000-0000-4000-8000-%012d", b)
	var buf bytes.Buffer
	for op := range 25 {
		for _, phase := range []string{"start", "finish"} {
			seq := 2*op + 1
			if phase == "finish" {
				seq++
			}
			id := fmt.Sprintf("%08d-0000-4000-8000-%012d", b, seq)
			ids = append(ids, id)
			extra := ""
			if phase == "finish" {
				extra = `,"ok":true,"duration_ms":1.5,"error_code":null,"error_type":null,"error_message":null,"error_retryable":null,"stdout":null,"stderr":null`
			}
			fmt.Fprintf(&buf, `{"version":1,"event_id":"%s","ts":"2026-03-14T15:09:26.5Z","session_id":"%s","seq":%d,"op":"read","phase":"%s","span_id":"op%d","parent_span_id":null,"trace_id":null,"data":{"path":"/w/%d"}%s}`+"\n",
				id, session, seq, phase, op, op, extra)
		}
	}
	return buf.Bytes(), ids
}

// TestKilledMidSpoolAndMidReplayLosesNothing: a client posts 200 batches
// (10 000 events) to an edge collector that forwards them to a central
// one, resending each batch until it is acknowledged. The edge is SIGKILLed
// five times while the central is down (mid-spool) and five times after
// it is back (mid-replay), and restarted each time. In the end every
// acknowledged event is in the central audit file, no line is torn, and
// every duplicate is a byte-exact copy.
func TestKilledMidSpoolAndMidReplayLosesNothing(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addrs := freeAddrs(t, 2)
	edgeAddr, centralAddr := addrs[0], addrs[1]
	spool := filepath.Join(dir, "edge", "spool.jsonl")
	audit := filepath.Join(dir, "central", "audit.jsonl")
	edgeCfg := crashEdgeConfig(edgeAddr, centralAddr, spool)
	centralCfg := crashCentralConfig(centralAddr, audit)
	central := startCollector(t, "central", filepath.Join(dir, "central"), centralCfg, centralAddr)
	edge := startCollector(t, "edge", filepath.Join(dir, "edge"), edgeCfg, edgeAddr)

	const batches = 200
	var mu sync.Mutex
	acked := map[string]bool{}
	progress := 0
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	clientDone := make(chan struct{})
	go func() {
		defer close(clientDone)
		client := &http.Client{Timeout: 10 * time.Second}
		for b := 0; b < batches && ctx.Err() == nil; b++ {
			body, ids := crashBatch(b)
			for ctx.Err() == nil { // resend until acknowledged, as the Python sink does
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+edgeAddr+"/v1/sandbox/events", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/x-ndjson")
				resp, err := client.Do(req)
				if err == nil {
					_ = resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						break
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
			mu.Lock()
			for _, id := range ids {
				acked[id] = true
			}
			progress = b + 1
			mu.Unlock()
		}
	}()
	waitProgress := func(n int) {
		deadline := time.Now().Add(deliveryTimeout)
		for {
			mu.Lock()
			p := progress
			mu.Unlock()
			if p >= n || time.Now().After(deadline) {
				return
			}
			time.Sleep(pollInterval)
		}
	}
	kill := func(phase string) {
		require.NoError(t, edge.cmd.Process.Kill())
		<-edge.done
		mu.Lock()
		p := progress
		mu.Unlock()
		t.Logf("%s: edge killed at batch %d, spool pending %d bytes", phase, p, pendingBytes(t, spool))
		edge = startCollector(t, "edge", filepath.Join(dir, "edge"), edgeCfg, edgeAddr)
	}

	waitProgress(20)
	central.stop(t)
	for i := range 5 { // mid-spool: the client keeps posting, the edge spools
		waitProgress(40 + 20*i)
		kill("mid-spool")
	}
	central = startCollector(t, "central", filepath.Join(dir, "central"), centralCfg, centralAddr)
	for range 5 { // mid-replay: the spool drains to the central collector
		time.Sleep(60 * time.Millisecond)
		kill("mid-replay")
	}
	<-clientDone
	require.NoError(t, ctx.Err(), "the client did not get every batch acknowledged")

	deadline := time.Now().Add(deliveryTimeout)
	for pendingBytes(t, spool) != 0 || countLines(t, audit) < len(acked) {
		require.True(t, time.Now().Before(deadline), "spool pending %d, audit %d of %d lines", pendingBytes(t, spool), countLines(t, audit), len(acked))
		time.Sleep(pollInterval)
	}
	edge.stop(t)
	central.stop(t)

	raw := mustRead(t, audit)
	require.True(t, len(raw) == 0 || raw[len(raw)-1] == '\n', "torn last line")
	byID := map[string]string{}
	dups := 0
	for line := range strings.Lines(string(raw)) {
		i := strings.Index(line, `"event_id":"`)
		require.GreaterOrEqual(t, i, 0, "not an event: %q", line)
		id := line[i+len(`"event_id":"`) : i+len(`"event_id":"`)+36]
		if prev, ok := byID[id]; ok {
			assert.Equal(t, prev, line, "duplicate of %s is not an exact copy", id)
			dups++
		}
		byID[id] = line
	}
	lost := 0
	for id := range acked {
		if _, ok := byID[id]; !ok {
			lost++
		}
	}
	t.Logf("acknowledged %d events; central holds %d lines, %d duplicates, %d lost", len(acked), strings.Count(string(raw), "\n"), dups, lost)
	assert.Zero(t, lost, "acknowledged events lost")
	code, out := runCLI(t, "verify", "--allow-duplicates", audit)
	assert.Equal(t, 0, code, "verify:\n%s", indent(out))
}
