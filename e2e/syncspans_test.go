package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// TestSyncSpansHoldThroughKilledCollectors: eight DeliverySync sessions,
// whose finishes ride in their spans (otlptracehttp behind
// sandboxtrace.NewSpanProcessor, as the README sets it up), run against a
// collector that is SIGKILLed, stopped (SIGSTOP) and restarted under them.
// The span exports and the start records that meet a refused or cut
// connection go again once the collector is back (a record only within its
// 1 s sync timeout; past it the operation fails closed): every operation whose function ran has its start and
// its finish in the trail, and verify passes.
func TestSyncSpansHoldThroughKilledCollectors(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	auditDir := filepath.Join(dir, "audit")
	cfg := collectorYAML{otlpAddr: addr,
		exporter: fmt.Sprintf("file:\n  path: %s", filepath.Join(auditDir, "{session_id}.jsonl"))}.String()
	col := startCollector(t, "collector", filepath.Join(dir, "0"), cfg, addr)

	ctx := context.Background()
	// A short batch timeout sends spans while the collector is away in
	// every round, not only in some.
	tp, lp := syncProviders(t, addr, sdktrace.WithBatchTimeout(100*time.Millisecond))

	stop := make(chan struct{})
	done := make(chan []syncOp)
	ss := syncSessions(t, tp, lp, sandboxtrace.DeliverySync, 8)
	go func() { done <- runExecs(ss, stop) }()
	col = disturb(t, col, 4, dir, cfg, addr)
	close(stop)
	ops := <-done
	require.NoError(t, lp.Shutdown(ctx))
	require.NoError(t, tp.Shutdown(ctx))
	col.stop(t)

	starts, finishes := trailBySpan(t, auditDir, opSessions(ops))
	checkSyncOps(t, ops, starts, finishes)
	// A start the collector wrote but could not acknowledge before its
	// kill has no finish: its operation never ran (checkSyncOps).
	code, out := runCLI(t, "verify", "--allow-duplicates", "--allow-open", auditDir)
	require.Equal(t, 0, code, "verify:\n%s", indent(string(tail([]byte(out), 4000))))
}
