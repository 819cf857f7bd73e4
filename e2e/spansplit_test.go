package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// TestSpanOverMaxLineBytesFailsAlone: sixteen DeliverySync sessions, whose
// finishes ride in their spans (otlptracehttp behind NewSpanProcessor),
// each run one exec; session 0's exec prints more than the collector's
// max_line_bytes, which it keeps in the finish event. All the spans go in
// one batch, which the collector refuses whole. The batch goes again in
// halves: only session 0's finish is lost, and every other session's
// finish is in the trail.
func TestSpanOverMaxLineBytesFailsAlone(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	auditDir := filepath.Join(dir, "audit")
	col := startCollector(t, "collector", dir, collectorYAML{otlpAddr: addr, exporter: fmt.Sprintf(
		"max_line_bytes: 65536\npayload_policy:\n  include_exec_output: true\n  max_stdout_chars: 200000\n"+
			"file:\n  path: %s", filepath.Join(auditDir, "{session_id}.jsonl"))}.String(), addr)

	ctx := context.Background()
	// No batch goes before the ForceFlush below: the spans share one.
	tp, lp := syncProviders(t, addr, sdktrace.WithBatchTimeout(time.Hour))

	var ops []syncOp
	huge := []byte(strings.Repeat("x", 100_000))
	for i := range 16 {
		s, err := sandboxtrace.NewSession(ctx, tp, sandboxtrace.WithLoggerProvider(lp),
			sandboxtrace.WithDelivery(sandboxtrace.DeliverySync), sandboxtrace.WithOutputCapture(len(huge)))
		require.NoError(t, err)
		o := syncOp{session: s.ID().String(), trace: s.TraceID().String()}
		_, o.err = s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"true"}},
			func(ctx context.Context) (sandboxtrace.ExecResult, error) {
				o.ran, o.span = true, trace.SpanContextFromContext(ctx).SpanID().String()
				if i == 0 {
					return sandboxtrace.ExecResult{Stdout: huge}, nil
				}
				return sandboxtrace.ExecResult{}, nil
			})
		require.NoError(t, o.err, "the start is small")
		require.NoError(t, s.Shutdown(ctx))
		ops = append(ops, o)
	}
	err := tp.ForceFlush(ctx)
	require.ErrorContains(t, err, "sandboxtrace: 1 span lost (1 in total): ")
	require.ErrorContains(t, err, "400 Bad Request")
	require.NoError(t, tp.Shutdown(ctx))
	require.NoError(t, lp.Shutdown(ctx))
	col.stop(t)

	starts, finishes := trailBySpan(t, auditDir, opSessions(ops))
	for i, o := range ops {
		require.Contains(t, starts, o.span, "session %d's start", i)
		if i == 0 {
			require.NotContains(t, finishes, o.span, "the refused finish")
			continue
		}
		require.Contains(t, finishes, o.span, "session %d's finish", i)
		require.Equal(t, o.trace, *finishes[o.span].TraceID)
	}
}
