package sandboxaudit

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/otelcol"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// validate loads and validates the configuration at uris exactly as
// `otelcol-sandboxaudit validate` does: resolve, unmarshal into the real
// factories' configs, run every Validate, and check the pipelines.
func validate(t *testing.T, uris ...string) error {
	t.Helper()
	set := CollectorSettings()
	set.ConfigProviderSettings = ConfigProviderSettings(uris...)
	col, err := otelcol.NewCollector(set)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return col.DryRun(ctx)
}

// makeAuditKey makes the signing key pair in dir/keys that
// `sandboxaudit keygen --name audit --out keys` run in dir would make.
func makeAuditKey(t *testing.T, dir string) {
	t.Helper()
	keys := filepath.Join(dir, "keys")
	require.NoError(t, os.Mkdir(keys, 0o700))
	_, _, err := integrity.GenerateKeyFiles(keys, "audit")
	require.NoError(t, err)
}

func TestDefaultConfigIsValid(t *testing.T) {
	require.NoError(t, validate(t)) // no URIs: the embedded default
	assert.True(t, strings.HasPrefix(DefaultConfigURI(), "yaml:"))
	assert.Equal(t, DefaultConfig(), strings.TrimPrefix(DefaultConfigURI(), "yaml:"))
}

func TestDefaultConfigListensOnLoopbackOnly(t *testing.T) {
	// Every endpoint the default opens must be on 127.0.0.1: an audit
	// intake reachable from the network by accident is a hole.
	for _, l := range strings.Split(DefaultConfig(), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "endpoint:") || strings.HasPrefix(l, "host:") {
			assert.Contains(t, l, "127.0.0.1", l)
		}
	}
	assert.Contains(t, DefaultConfig(), "path: ./audit/events.jsonl")
}

// TestExampleConfigsAreValid validates each testdata config from an empty
// working directory where, as its comment says to, `sandboxaudit keygen
// --name audit --out keys` has run: relative paths resolve as they would
// for a newcomer, and integrity.yaml finds its signing key.
func TestExampleConfigsAreValid(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	require.NoError(t, err)
	for i := range paths {
		paths[i], err = filepath.Abs(paths[i])
		require.NoError(t, err)
	}
	work := t.TempDir()
	makeAuditKey(t, work)
	t.Chdir(work)

	names := map[string]bool{}
	for _, p := range paths {
		names[filepath.Base(p)] = true
		t.Run(filepath.Base(p), func(t *testing.T) {
			require.NoError(t, validate(t, "file:"+p))
		})
	}
	for _, want := range []string{"file-only.yaml", "http-with-spool.yaml", "integrity.yaml", "edge.yaml", "central.yaml", "kafka-edge.yaml", "kafka-central.yaml"} {
		assert.True(t, names[want], "testdata/%s missing", want)
	}
}

func TestInvalidConfigIsRefused(t *testing.T) {
	// The validation above must be able to fail: an exporter with no sink
	// and a pipeline naming a component that does not exist.
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(`
receivers:
  sandboxaudit: {}
exporters:
  sandboxaudit: {}
service:
  pipelines:
    logs:
      receivers: [sandboxaudit]
      exporters: [sandboxaudit]
`), 0o600))
	err := validate(t, "file:"+bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at least one sink")

	missing := filepath.Join(dir, "missing.yaml")
	require.NoError(t, os.WriteFile(missing, []byte(`
receivers:
  otlp:
    protocols:
      http: {}
exporters:
  debug: {}
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [debug]
`), 0o600))
	require.Error(t, validate(t, "file:"+missing))
}

// TestCommandConfigFlag runs the distribution's command line: without
// --config it validates the embedded default, and --config replaces it.
func TestCommandConfigFlag(t *testing.T) {
	run := func(args ...string) error {
		cmd := otelcol.NewCommand(CollectorSettings())
		cmd.SetArgs(args)
		cmd.SetOut(&strings.Builder{})
		cmd.SetErr(&strings.Builder{})
		return cmd.Execute()
	}
	require.NoError(t, run("validate"))
	require.NoError(t, run("validate", "--config", filepath.Join("testdata", "central.yaml")))

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("receivers:\n  nosuch: {}\n"), 0o600))
	err := run("validate", "--config", bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nosuch")
}

// TestConfigsCarryWriteAheadStartEvents: the default and every example
// config whose collector takes OTLP route OTLP logs into the sandboxaudit
// exporter, where sandboxtrace's write-ahead start events go.
func TestConfigsCarryWriteAheadStartEvents(t *testing.T) {
	type pipeline struct {
		Receivers  []string `mapstructure:"receivers"`
		Processors []string `mapstructure:"processors"`
		Exporters  []string `mapstructure:"exporters"`
	}
	check := func(t *testing.T, conf *confmap.Conf) {
		if !conf.IsSet("receivers::otlp") {
			t.Skip("no otlp receiver: fed by another collector, not by sandboxtrace")
		}
		var logs pipeline
		sub, err := conf.Sub("service::pipelines::logs")
		require.NoError(t, err)
		require.NoError(t, sub.Unmarshal(&logs))
		assert.Contains(t, logs.Receivers, "otlp")
		// The audit file, or Kafka on the way to it (kafka-edge.yaml).
		assert.True(t, slices.Contains(logs.Exporters, "sandboxaudit") || slices.Contains(logs.Exporters, "kafka"),
			"logs exporters %v: neither sandboxaudit nor kafka", logs.Exporters)
	}
	t.Run("default", func(t *testing.T) {
		conf, err := confmaptest.LoadConf("default-config.yaml")
		require.NoError(t, err)
		check(t, conf)
	})
	paths, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	require.NoError(t, err)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			conf, err := confmaptest.LoadConf(p)
			require.NoError(t, err)
			check(t, conf)
		})
	}
}

// TestKafkaCentralBacksOffFailedWrites: the kafka receiver's error_backoff
// defaults are all zero, so the shipped central config must set the
// intervals, or a failed write (a full disk) is retried in a busy loop.
func TestKafkaCentralBacksOffFailedWrites(t *testing.T) {
	conf, err := confmaptest.LoadConf(filepath.Join("testdata", "kafka-central.yaml"))
	require.NoError(t, err)
	sub, err := conf.Sub("receivers::kafka")
	require.NoError(t, err)
	f := kafkareceiver.NewFactory()
	cfg := f.CreateDefaultConfig()
	require.NoError(t, sub.Unmarshal(cfg))
	bo := cfg.(*kafkareceiver.Config).ErrorBackOff
	require.True(t, bo.Enabled)
	assert.GreaterOrEqual(t, bo.InitialInterval, 100*time.Millisecond)
	assert.Greater(t, bo.MaxInterval, bo.InitialInterval)
	assert.Greater(t, bo.Multiplier, 1.0)
	assert.Zero(t, bo.MaxElapsedTime, "a message that cannot be written stays uncommitted and is retried")
}
