package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// oddlyTypedSecretSpan is a sandbox exec span whose data is an OTLP map,
// whose error message is bytes and whose stderr text is a list, with the
// error also recorded as an exception event, as an OTel SDK records it.
func oddlyTypedSecretSpan(t *testing.T) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	sp := failedExecSpan(td, 0x1d, "ExecError: "+redacttest.Text())
	a := sp.Attributes()
	a.PutStr("sandbox.operation", "exec")
	a.PutStr("sandbox.session.id", "5e1c2a8e-0000-4000-8000-00000000a003")
	env := map[string]any{}
	for k, v := range redacttest.Env() {
		env[k] = v
	}
	require.NoError(t, a.PutEmptyMap("sandbox.start_data").FromRaw(map[string]any{"env": env}))
	a.PutEmptyBytes("sandbox.error.message").FromRaw([]byte(redacttest.Text()))
	require.NoError(t, a.PutEmptySlice("sandbox.exec.stderr").FromRaw([]any{redacttest.Text()}))
	ev := sp.Events().AppendEmpty()
	ev.SetName("exception")
	ev.Attributes().PutStr("exception.message", redacttest.Text())
	ev.Attributes().PutStr("exception.stacktrace", "Traceback (most recent call last):\nExecError: "+redacttest.Text())
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	return body
}

// TestBackendGetsNoSecretOfAnOddlyTypedSpan: a sandbox span that carries
// its data, error and output as a map, bytes and a list (removed), and its
// error in an exception event (redacted), reaches a tracing backend behind
// the processor without any of its secrets.
func TestBackendGetsNoSecretOfAnOddlyTypedSpan(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	otlpAddr := freeAddr(t)
	cfg := redactBackendYAML(otlpAddr, "traces", true)
	col := startCollector(t, "collector", dir, cfg, otlpAddr)
	postOTLP(t, otlpAddr, oddlyTypedSecretSpan(t))
	waitLogCount(t, col.log, "exception.stacktrace", 1)
	col.stop(t)

	logText := string(mustRead(t, col.log))
	assertNoSecret(t, logText)
	for _, attr := range []string{"sandbox.start_data", "sandbox.error.message", "sandbox.exec.stderr"} {
		assert.NotContains(t, logText, "-> "+attr+":", "%s is removed: it is not text", attr)
	}
	for _, attr := range []string{"exception.message", "exception.stacktrace"} {
		assert.Regexp(t, `(?s)`+attr+`: Str\(.{0,80}?\[REDACTED:`, logText, attr)
	}
}
