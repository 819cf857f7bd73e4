package sandboxauditencoding

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/encoding/internal/metadata"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/configtest"
)

// loadConfig unmarshals the named section of testdata/config.yaml and runs
// the collector's validation (every nested Validate, with key paths).
func loadConfig(t *testing.T, name string) (*Config, error) {
	t.Helper()
	cfg, err := configtest.Load(t, NewFactory(), filepath.Join("testdata", "config.yaml"), component.NewIDWithName(metadata.Type, name))
	require.NoError(t, err)
	return cfg.(*Config), confmap.Validate(cfg)
}

func TestConfigDefault(t *testing.T) {
	cfg, err := loadConfig(t, "")
	require.NoError(t, err)
	assert.Equal(t, NewFactory().CreateDefaultConfig(), cfg)
	p, err := newPolicies(cfg)
	require.NoError(t, err)
	assert.Equal(t, auditevent.DefaultPolicy(), p.Get("exec").Policy, "exec output redacted by default")
}

func TestConfigLevels(t *testing.T) {
	cfg, err := loadConfig(t, "redact")
	require.NoError(t, err)
	p, err := newPolicies(cfg)
	require.NoError(t, err)
	assert.Equal(t, auditevent.Policy{IncludeExecOutput: true, MaxStdoutChars: 2000, MaxStderrChars: 0, IncludeWriteLen: false}, p.Get("exec").Policy)
	assert.Equal(t, auditevent.Policy{IncludeExecOutput: false, MaxStdoutChars: 8000, MaxStderrChars: 8000, IncludeWriteLen: false}, p.Get("write").Policy)
	assert.Equal(t, p.Get("write"), p.Get("an op of a later format version"))
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	_, err := loadConfig(t, "bad_op")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `payload_policy_by_op: unknown op "teleport"`)

	_, err = loadConfig(t, "negative")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "payload_policy: max_stdout_chars: must be >= 0, got -1")

	_, err = loadConfig(t, "unused_patterns")
	require.ErrorContains(t, err, "payload_policy::redact: keys written, but redaction is off")
}
