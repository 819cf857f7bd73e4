package sandboxauditprocessor

import (
	"encoding/base64"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/configtest"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cfg, err := configtest.Load(t, NewFactory(), filepath.Join("testdata", "config.yaml"), component.MustNewIDWithName("sandboxaudit", name))
	require.NoError(t, err)
	return cfg.(*Config)
}

// run passes one span with attrs through a processor built from cfg and
// returns the attributes that reach the next consumer.
func run(t *testing.T, cfg *Config, attrs map[string]any) map[string]any {
	t.Helper()
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetName("sandbox.exec")
	require.NoError(t, span.Attributes().FromRaw(attrs))
	return process(t, cfg, td).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().AsRaw()
}

func execSpan(extra map[string]any) map[string]any {
	m := map[string]any{
		"sandbox.operation":  "exec",
		"sandbox.session.id": "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b",
		"sandbox.start_data": `{"command":["cat"]}`,
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func TestDefaultRemovesAllRawExecOutput(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte("secret token\n"))
	for name, attrs := range map[string]map[string]any{
		"base64 strings":  {"sandbox.exec.stdout_bytes": b64, "sandbox.exec.stderr_bytes": b64},
		"bytes":           {"sandbox.exec.stdout_bytes": []byte("secret"), "sandbox.exec.stderr_bytes": []byte("secret")},
		"decoded strings": {"sandbox.exec.stdout": "secret", "sandbox.exec.stderr": "secret"},
	} {
		t.Run(name, func(t *testing.T) {
			got := run(t, createDefaultConfig().(*Config), execSpan(attrs))
			for _, k := range []string{"sandbox.exec.stdout_bytes", "sandbox.exec.stderr_bytes", "sandbox.exec.stdout", "sandbox.exec.stderr"} {
				assert.NotContains(t, got, k)
			}
			assert.Equal(t, `{"command":["cat"]}`, got["sandbox.start_data"], "the rest is untouched")
		})
	}
}

func TestIncludedOutputIsDecodedAndCut(t *testing.T) {
	cfg := loadConfig(t, "exec_output")
	got := run(t, cfg, execSpan(map[string]any{
		"sandbox.exec.stdout_bytes": base64.StdEncoding.EncodeToString([]byte("hello world")),
		"sandbox.exec.stderr_bytes": []byte("bad \xff byte"),
	}))
	assert.NotContains(t, got, "sandbox.exec.stdout_bytes")
	assert.NotContains(t, got, "sandbox.exec.stderr_bytes")
	assert.Equal(t, "hello…", got["sandbox.exec.stdout"], "max_stdout_chars 5")
	assert.Equal(t, "bad \ufffd byte", got["sandbox.exec.stderr"], "max_stderr_chars default 8000")
}

func TestIncludedOutputThatDoesNotDecodeIsRemoved(t *testing.T) {
	got := run(t, loadConfig(t, "exec_output"), execSpan(map[string]any{
		"sandbox.exec.stdout_bytes": "%%% not base64",
		"sandbox.exec.stdout":       "stale",
	}))
	assert.NotContains(t, got, "sandbox.exec.stdout_bytes")
	assert.NotContains(t, got, "sandbox.exec.stdout")
}

func TestPerOpPolicy(t *testing.T) {
	cfg := loadConfig(t, "exec_output")
	// read: not opted in, so its output (if any) is removed.
	got := run(t, cfg, map[string]any{
		"sandbox.operation": "read", "sandbox.session.id": "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b",
		"sandbox.exec.stdout_bytes": []byte("x"),
	})
	assert.NotContains(t, got, "sandbox.exec.stdout_bytes")
	assert.NotContains(t, got, "sandbox.exec.stdout")

	// write: include_write_len false drops data.bytes in both phases.
	got = run(t, cfg, map[string]any{
		"sandbox.operation": "write", "sandbox.session.id": "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b",
		"sandbox.start_data":  `{"path":"/w/a","bytes":12,"user":null}`,
		"sandbox.finish_data": `{"path":"/w/a","bytes":12,"user":null,"nested":{"bytes":1}}`,
	})
	assert.Equal(t, `{"path":"/w/a","user":null}`, got["sandbox.start_data"])
	assert.Equal(t, `{"nested":{"bytes":1},"path":"/w/a","user":null}`, got["sandbox.finish_data"], "only the top-level key")

	// exec keeps its write length (the default).
	got = run(t, cfg, execSpan(map[string]any{"sandbox.start_data": `{"bytes":3}`}))
	assert.Equal(t, `{"bytes":3}`, got["sandbox.start_data"])
}

func TestNonSandboxSpansAreUntouched(t *testing.T) {
	attrs := map[string]any{
		"sandbox.sdk.name":    "e2b", // no attribute the policy governs
		"http.request.method": "GET",
		"http.response.body":  "c2VjcmV0",
	}
	got := run(t, createDefaultConfig().(*Config), attrs)
	assert.Equal(t, attrs, got)
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	err := confmap.Validate(loadConfig(t, "bad_op"))
	require.ErrorContains(t, err, "payload_policy_by_op: unknown op \"frobnicate\"")
	err = confmap.Validate(loadConfig(t, "negative"))
	require.ErrorContains(t, err, "max_stderr_chars")
	err = confmap.Validate(loadConfig(t, "unused_patterns"))
	require.ErrorContains(t, err, "payload_policy_by_op::exec::redact: patterns written, but redaction is off")
	require.NoError(t, confmap.Validate(loadConfig(t, "exec_output")))
	require.NoError(t, confmap.Validate(createDefaultConfig()))
}
