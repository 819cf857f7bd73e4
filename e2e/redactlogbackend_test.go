package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// TestLogBackendGetsNoSecretOfWriteAheadRecords: sandboxtrace's records
// sent ahead of an exec whose command and output hold credentials reach a
// log backend behind the processor in a logs pipeline redacted, without
// the exec output.
func TestLogBackendGetsNoSecretOfWriteAheadRecords(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	otlpAddr := freeAddr(t)
	cfg := redactBackendYAML(otlpAddr, "logs", false)
	col := startCollector(t, "collector", dir, cfg, otlpAddr)
	runSecretExec(t, otlpAddr)
	waitLogCount(t, col.log, "sandbox.event.phase: Str(finish)", 1)
	col.stop(t)

	logText := string(mustRead(t, col.log))
	require.Contains(t, logText, "sandbox.event.phase: Str(start)")
	assert.Contains(t, logText, "[REDACTED:github_token]", "the command reaches the backend, cut")
	assertNoSecret(t, logText)
	assert.NotContains(t, logText, "sandbox.exec.stdout_bytes")
	assert.NotContains(t, logText, "output of the command", "exec output is removed by default")
}

// runSecretExec records one exec through sandboxtrace, its start and
// finish records exported synchronously to the collector at addr.
func runSecretExec(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	exp, err := sandboxtrace.NewDirectLogExporter("http://" + addr + "/v1/logs")
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider()
	defer func() { require.NoError(t, tp.Shutdown(context.WithoutCancel(ctx))) }()
	s, err := sandboxtrace.NewSession(ctx, tp, sandboxtrace.WithLogExporter(exp),
		sandboxtrace.WithDelivery(sandboxtrace.DeliverySyncFinish), sandboxtrace.WithOutputCapture(0))
	require.NoError(t, err)
	_, err = s.Exec(ctx, sandboxtrace.ExecRequest{Command: redacttest.Argv()},
		func(context.Context) (sandboxtrace.ExecResult, error) {
			out := "output of the command\n" + redacttest.Text()
			return sandboxtrace.ExecResult{Stdout: []byte(out), Stderr: []byte(redacttest.GitHubToken)}, nil
		})
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(context.WithoutCancel(ctx)))
}

// redactBackendYAML is a collector that stands in for a backend: OTLP/HTTP
// in, the sandboxaudit processor with the user redaction rules on one
// pipeline (traces or logs), the debug exporter printing every attribute.
func redactBackendYAML(otlpAddr, pipeline string, includeExecOutput bool) string {
	output := ""
	if includeExecOutput {
		output = "\n      include_exec_output: true"
	}
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
processors:
  sandboxaudit:
    payload_policy:%s
      redact:
        patterns: ['%s']
        keys: [%s]
exporters:
  debug:
    verbosity: detailed
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    %s:
      receivers: [otlp]
      processors: [sandboxaudit]
      exporters: [debug]
`, otlpAddr, output, redacttest.UserPattern, redacttest.UserKey, pipeline)
}

// assertNoSecret checks that the debug exporter's output holds none of
// the test secrets.
func assertNoSecret(t *testing.T, logText string) {
	t.Helper()
	for _, secret := range redacttest.Secrets() {
		assert.NotContains(t, logText, secret, "debug exporter output")
	}
}
