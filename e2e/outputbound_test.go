package e2e

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// TestLargeOutputCaptureKeepsTheFinish: a session whose capture bound is
// larger than a span can carry (16 MiB per stream, base64-encoded on the
// span: over the collector's default 20 MiB request limit) runs an exec
// that prints 10 MiB on each stream. The capture is cut to
// sandboxtrace.MaxOutputBytes, so the span, and with it the finish event,
// reaches the trail under the collector's default limits.
func TestLargeOutputCaptureKeepsTheFinish(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	auditDir := filepath.Join(dir, "audit")
	col := startCollector(t, "collector", dir, collectorYAML{otlpAddr: addr, exporter: fmt.Sprintf(
		"payload_policy:\n  include_exec_output: true\nfile:\n  path: %s", filepath.Join(auditDir, "{session_id}.jsonl"))}.String(), addr)

	ctx := context.Background()
	tp, lp := syncProviders(t, addr)
	s, err := sandboxtrace.NewSession(ctx, tp, sandboxtrace.WithLoggerProvider(lp),
		sandboxtrace.WithDelivery(sandboxtrace.DeliverySync), sandboxtrace.WithOutputCapture(16<<20))
	require.NoError(t, err)
	out := bytes.Repeat([]byte("out "), 10<<20/4)
	o := syncOp{session: s.ID().String(), trace: s.TraceID().String()}
	_, o.err = s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"yes"}},
		func(ctx context.Context) (sandboxtrace.ExecResult, error) {
			o.ran, o.span = true, trace.SpanContextFromContext(ctx).SpanID().String()
			return sandboxtrace.ExecResult{ExitCode: 3, Stdout: out, Stderr: out}, nil
		})
	require.NoError(t, o.err)
	require.NoError(t, s.Shutdown(ctx))
	require.NoError(t, tp.Shutdown(ctx), "the span fits one request")
	require.NoError(t, lp.Shutdown(ctx))
	col.stop(t)

	starts, finishes := trailBySpan(t, auditDir, opSessions([]syncOp{o}))
	require.Contains(t, starts, o.span)
	require.Contains(t, finishes, o.span, "the finish is in the trail")
	fin := finishes[o.span]
	require.False(t, fin.OK)
	require.NotNil(t, fin.Stdout)
	require.Equal(t, "out out ", (*fin.Stdout)[:8])
}
