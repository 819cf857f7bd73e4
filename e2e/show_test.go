package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestShowCollectorTrail reads a trail our collector wrote, from two runs
// of the instrumented example (one with a failing exec) and a third killed
// in the middle of its exec: show gives back every line unchanged, in
// session and seq order, with the killed exec open; sessions sums it up.
func TestShowCollectorTrail(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	otlpAddr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", dir, collectorYAML{
		otlpAddr: otlpAddr, batch: "timeout: 50ms", exporter: "file:\n  path: " + auditPath,
	}.String(), otlpAddr)

	const okSession, failSession = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b", "22222222-3333-4444-8555-666666666666"
	// The killed run's session is random (the example prints it).
	runExample(t, otlpAddr, okSession)
	runExample(t, otlpAddr, failSession, "-exit-code", "3")
	ex := startExample(t, "-endpoint", otlpAddr, "-delivery", "sync", "-exec-sleep", "10m")
	ex.next(t) // trace_id=
	require.Equal(t, "exec running", ex.next(t))
	require.NoError(t, ex.cmd.Process.Signal(os.Kill))
	_ = ex.cmd.Wait()
	deadline := time.Now().Add(deliveryTimeout)
	for !hasEvent(t, auditPath, ex.session, "exec", auditevent.PhaseStart) {
		require.True(t, time.Now().Before(deadline), "no exec start of the killed run after %s", deliveryTimeout)
		time.Sleep(pollInterval)
	}
	col.stop(t)
	_, lines := readEvents(t, auditPath)

	code, out := runCLI(t, "show", "--output", "jsonl", auditPath)
	require.Equal(t, 0, code, out)
	got := strings.Split(out, "\n")
	require.ElementsMatch(t, lines, got[:len(got)-1], "every line, unchanged")

	code, out = runCLI(t, "show", "--output", "json", "--session", ex.session, auditPath)
	require.Equal(t, 0, code, out)
	var ops []struct {
		Op     string          `json:"op"`
		Open   bool            `json:"open"`
		Start  json.RawMessage `json:"start"`
		Finish json.RawMessage `json:"finish"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ops))
	require.NotEmpty(t, ops)
	last := ops[len(ops)-1]
	assert.Equal(t, "exec", last.Op)
	assert.True(t, last.Open, "the killed exec is open")
	assert.Equal(t, "null", string(last.Finish))

	// Every run has a failing `ls /nope`; the second's first exec fails too.
	code, out = runCLI(t, "show", "--failed", "--output", "jsonl", "--session", failSession, auditPath)
	require.Equal(t, 0, code, out)
	assert.Equal(t, 4, strings.Count(out, "\n"), "two failed operations, two lines each:\n%s", out)
	assert.Contains(t, out, `"exit_code":3`)
	code, out = runCLI(t, "show", "--failed", "--output", "jsonl", "--session", okSession, auditPath)
	require.Equal(t, 0, code, out)
	assert.Equal(t, 2, strings.Count(out, "\n"), out)
	assert.Contains(t, out, `"ls","/nope"`)

	code, out = runCLI(t, "sessions", "--output", "jsonl", auditPath)
	require.Equal(t, 0, code, out)
	rows := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		rows[r["session_id"].(string)] = r
	}
	require.Len(t, rows, 3)
	assert.Equal(t, 0.0, rows[okSession]["open"])
	assert.Equal(t, 1.0, rows[okSession]["failures"])
	assert.Equal(t, 2.0, rows[failSession]["failures"])
	// The exec at least: the spans of the operations before it (their
	// finishes) may not have left the process before the kill.
	assert.GreaterOrEqual(t, rows[ex.session]["open"], 1.0)
}
