package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// TestSyncSpansHoldThroughKilledCollectors: eight DeliverySync sessions,
// whose finishes ride in their spans (otlptracehttp behind
// sandboxtrace.NewSpanProcessor, as the README sets it up), run against a
// collector that is SIGKILLed, stopped (SIGSTOP) and restarted under them.
// The span exports that meet a refused or cut connection go again once the
// collector is back: every operation whose function ran has its start and
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
	spanExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	// A short batch timeout sends spans while the collector is away in
	// every round, not only in some.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(
		sandboxtrace.NewSpanProcessor(spanExp, sdktrace.WithBatchTimeout(100*time.Millisecond))),
		sdktrace.WithSampler(sdktrace.AlwaysSample()))
	logExp, err := sandboxtrace.NewDirectLogExporter("http://" + addr + "/v1/logs")
	require.NoError(t, err)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sandboxtrace.NewSyncLogProcessor(logExp, time.Second)))

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

	sessions := map[string]bool{}
	for _, o := range ops {
		sessions[o.session] = true
	}
	starts, finishes := trailBySpan(t, auditDir, sessions)
	checkSyncOps(t, ops, starts, finishes)
	// A start the collector wrote but could not acknowledge before its
	// kill has no finish: its operation never ran (checkSyncOps).
	code, out := runCLI(t, "verify", "--allow-duplicates", "--allow-open", auditDir)
	require.Equal(t, 0, code, "verify:\n%s", indent(string(tail([]byte(out), 4000))))
}
