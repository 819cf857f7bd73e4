package sandboxauditreceiver

import (
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/confmap"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/configtest"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

func loadConfig(t *testing.T, name string) (*Config, error) {
	t.Helper()
	cfg, err := configtest.Load(t, NewFactory(), filepath.Join("testdata", "config.yaml"), component.NewIDWithName(metadata.Type, name))
	if err != nil {
		return nil, err
	}
	return cfg.(*Config), nil
}

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	assert.Equal(t, "localhost:8088", cfg.ServerConfig.NetAddr.Endpoint)
	assert.Equal(t, "/v1/traces", cfg.TracesPath)
	assert.Equal(t, "/v1/sandbox/events", cfg.EventsPath)
	assert.Equal(t, 10000, cfg.MaxPending)
	assert.Equal(t, 5*time.Minute, cfg.PendingTimeout)
	assert.Equal(t, time.Duration(0), cfg.SweepInterval)
	assert.True(t, cfg.Dedupe.Enabled)
	assert.Equal(t, 100000, cfg.Dedupe.Window)
	assert.False(t, cfg.ServerConfig.TLS.HasValue(), "plain HTTP on loopback by default")
	assert.Equal(t, int64(128<<20), cfg.MaxInflightBytes)
	assert.Equal(t, 16<<10, cfg.MaxRequestHeaderBytes)
	assert.Equal(t, 4096, cfg.MaxConnections)
	assert.Equal(t, int64(16<<10), cfg.MinBodyRate)
	require.NoError(t, confmap.Validate(cfg))
}

// TestServerTimeoutsAreFinite: with no timeout configured, the HTTP server
// the receiver starts has finite read, read-header and idle timeouts, so a
// client that trickles bytes or idles cannot hold a connection forever; the
// keys override them.
func TestServerTimeoutsAreFinite(t *testing.T) {
	for name, want := range map[string][3]time.Duration{
		"":         {10 * time.Second, 30 * time.Second, 60 * time.Second},
		"timeouts": {2 * time.Second, 5 * time.Second, 7 * time.Second},
	} {
		t.Run("config_"+name, func(t *testing.T) {
			cfg, err := loadConfig(t, name)
			require.NoError(t, err)
			require.NoError(t, confmap.Validate(cfg))
			srv, err := cfg.ServerConfig.ToServer(t.Context(), nil, componenttest.NewNopTelemetrySettings(), http.NotFoundHandler())
			require.NoError(t, err)
			assert.Equal(t, want[0], srv.ReadHeaderTimeout, "read_header_timeout")
			assert.Equal(t, want[1], srv.ReadTimeout, "read_timeout")
			assert.Equal(t, want[2], srv.IdleTimeout, "keepalive::idle_timeout")
		})
	}
}

func TestLoadConfig(t *testing.T) {
	cfg, err := loadConfig(t, "")
	require.NoError(t, err)
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "localhost:8088", cfg.ServerConfig.NetAddr.Endpoint)
	assert.Equal(t, "/v1/traces", cfg.TracesPath)

	cfg, err = loadConfig(t, "custom")
	require.NoError(t, err)
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "0.0.0.0:9999", cfg.ServerConfig.NetAddr.Endpoint)
	assert.Equal(t, int64(1048576), cfg.ServerConfig.MaxRequestBodySize)
	assert.Equal(t, "/otlp/v1/traces", cfg.TracesPath)
	assert.Equal(t, "/audit/events", cfg.EventsPath)
	assert.Equal(t, 50, cfg.MaxPending)
	assert.Equal(t, 30*time.Second, cfg.PendingTimeout)
	assert.Equal(t, 2*time.Second, cfg.SweepInterval)
	assert.Equal(t, DedupeConfig{Enabled: true, Window: 500}, cfg.Dedupe)
	want := confighttp.NewDefaultCORSConfig()
	want.AllowedOrigins = []string{"https://agents.example.com"}
	assert.Equal(t, configoptional.Some(want), cfg.ServerConfig.CORS)

	cfg, err = loadConfig(t, "nodedupe")
	require.NoError(t, err)
	require.NoError(t, confmap.Validate(cfg), "window 0 is fine when dedupe is off")
	assert.False(t, cfg.Dedupe.Enabled)
}

func TestValidateNamesBadKeys(t *testing.T) {
	tests := []struct {
		name string
		want []string
	}{
		{"bad_paths", []string{`traces_path: must start with "/"`, `events_path: must be a clean path`}},
		{"same_paths", []string{"events_path: must differ from traces_path"}},
		{"escaped_path", []string{`events_path: must be a plain URL path without query, fragment, spaces, braces or percent escapes (got "/v1/%zz/events")`}},
		{"bad_pairing", []string{"max_pending: must be positive", "max_pending_bytes: must be positive", "pending_timeout: must be positive", "sweep_interval: must be between 0 and 24h0m0s (got -1s)"}},
		{"bad_window", []string{"dedupe::window: must be positive"}},
		{"negative_window_off", []string{"dedupe::window: must not be negative (got -1)"}},
		{"huge_durations", []string{"pending_timeout: must be positive and at most 168h0m0s (got 87600h0m0s)",
			"sweep_interval: must be between 0 and 24h0m0s (got 8760h0m0s)"}},
		{"empty_endpoint", []string{"endpoint: must not be empty"}},
		{"bad_conn_limits", []string{"max_request_header_bytes: must be at least 1024 (got 100)", "max_connections: must be positive (got 0)", "min_body_rate: must not be negative (got -1)"}},
		{"tiny_timeouts", []string{"read_timeout: must be 0 or at least 100ms, got 1ns",
			"read_header_timeout: must be 0 or at least 100ms, got 1ms", "write_timeout: must be 0 or at least 100ms, got 99ms"}},
		{"huge_header_bound", []string{"max_request_header_bytes: must be at most 4294963199 (got 9223372036854775807)"}},
		{"h2_header_bound", []string{"max_request_header_bytes: must be at most 4294963199 (got 4294967296)"}},
		{"bad_small_bodies", []string{"small_body_inflight_bytes: must be greater than small_body_bytes (65536), so that one small body fits (got 65536)", "small_body_timeout: must be >= 0, got -1s"}},
		{"negative_small_body", []string{"small_body_bytes: must not be negative (got -1)"}},
		{"small_budget", []string{"max_inflight_bytes: must be greater than max_request_body_size (1048576)"}},
		{"unknown_coding", []string{`compression_algorithms::1: "lzma" is not a coding the server decodes`,
			`compression_algorithms::3: "GZIP" is not a coding the server decodes`}},
		{"negative_timeouts", []string{"read_timeout: must be >= 0, got -1s", "read_header_timeout: must be >= 0, got -1s",
			"write_timeout: must be >= 0, got -1s", "keepalive::idle_timeout: must be >= 0, got -1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(t, tt.name)
			require.NoError(t, err)
			err = confmap.Validate(cfg)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestQuietlyChangedNumbersAreRefused: a fraction for an integer key and
// a duration without a unit were taken as 1 and 30ns; they are refused
// when the config is read, each naming its key.
func TestQuietlyChangedNumbersAreRefused(t *testing.T) {
	_, err := loadConfig(t, "quietly_changed_numbers")
	require.Error(t, err)
	for _, w := range []string{
		"max_pending: must be a whole number within range (got 1.5)",
		"read_timeout: a duration needs a unit",
		"max_inflight_bytes: must be a whole number within range (got 1.342177285e+08)",
	} {
		assert.ErrorContains(t, err, w)
	}
}

func TestUnknownKeyIsRefused(t *testing.T) {
	_, err := loadConfig(t, "unknown_key")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max_pendng")
}

func TestSweepInterval(t *testing.T) {
	cfg := &Config{PendingTimeout: 5 * time.Minute}
	assert.Equal(t, time.Second, cfg.sweepInterval())
	cfg.PendingTimeout = 2 * time.Second
	assert.Equal(t, 200*time.Millisecond, cfg.sweepInterval())
	cfg.PendingTimeout = time.Millisecond
	assert.Equal(t, minSweepInterval, cfg.sweepInterval())
	cfg.SweepInterval = 3 * time.Second
	assert.Equal(t, 3*time.Second, cfg.sweepInterval())
}

// TestTLSFileThatIsAFIFOIsRefused: as in the exporter, a FIFO in the place
// of a TLS file is refused when the config is validated.
func TestTLSFileThatIsAFIFOIsRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "cert.pem")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	cfg := createDefaultConfig().(*Config)
	cfg.ServerConfig.TLS = configoptional.Some(configtls.ServerConfig{Config: configtls.Config{CertFile: fifo, KeyFile: fifo}})
	err := confmap.Validate(cfg)
	require.ErrorContains(t, err, "tls::cert_file: "+fifo+" is not a regular file")
	require.ErrorContains(t, err, "tls::key_file: "+fifo+" is not a regular file")
}
