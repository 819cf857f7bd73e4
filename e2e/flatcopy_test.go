package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// TestBackendGetsNoSecretOfAFlatCopy: sandboxtrace copies an operation's
// finish data server.address to an attribute of its own; a credential in
// it reaches a tracing backend behind the processor cut, as in the data.
func TestBackendGetsNoSecretOfAFlatCopy(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	otlpAddr := freeAddr(t)
	col := startCollector(t, "collector", dir, redactBackendYAML(otlpAddr, "traces", false), otlpAddr)

	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(otlpAddr), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sandboxtrace.NewSpanProcessor(exp)))
	s, err := sandboxtrace.NewSession(ctx, tp)
	require.NoError(t, err)
	addr := "https://alice:" + redacttest.GitHubToken + "@db.example.com"
	require.NoError(t, s.Do(ctx, "exec", map[string]any{"command": []any{"psql"}}, func(_ context.Context, o *sandboxtrace.Op) error {
		o.SetFinishData(map[string]any{"server.address": addr})
		return nil
	}))
	require.NoError(t, s.Shutdown(ctx))
	require.NoError(t, tp.Shutdown(ctx))
	waitLogCount(t, col.log, "-> server.address:", 1)
	col.stop(t)

	logText := string(mustRead(t, col.log))
	assertNoSecret(t, logText)
	assert.Contains(t, logText, "-> server.address: Str(https://alice:[REDACTED:url_password]@db.example.com)")
}
