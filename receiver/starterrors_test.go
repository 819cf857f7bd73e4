package sandboxauditreceiver

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// startErr starts a logs receiver on cfg and returns Start's error.
func startErr(t *testing.T, cfg *Config) error {
	t.Helper()
	validateOnPortZero(t, cfg)
	ctx := context.Background()
	c, err := NewFactory().CreateLogs(ctx, receivertest.NewNopSettings(metadata.Type), cfg, new(consumertest.LogsSink))
	require.NoError(t, err)
	err = c.Start(ctx, componenttest.NewNopHost())
	require.NoError(t, c.Shutdown(ctx))
	return err
}

// TestStartErrorsNameTheKey: a port already taken and a TLS file that is
// not there fail at start naming the key, once; the collector names the
// component itself.
func TestStartErrorsNameTheKey(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = ln.Close() }()
	cfg := createDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = ln.Addr().String()
	err = startErr(t, cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "endpoint: ")
	assert.Contains(t, err.Error(), "address already in use")
	assert.NotContains(t, err.Error(), "sandboxaudit receiver", "the collector names the component")

	missing := filepath.Join(t.TempDir(), "nope.pem")
	cfg = createDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	cfg.ServerConfig.TLS = configoptional.Some(configtls.ServerConfig{Config: configtls.Config{CertFile: missing, KeyFile: missing}})
	err = startErr(t, cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tls::cert_file: ")
	assert.Contains(t, err.Error(), missing)
}

// TestEndpointThatCannotBeListenedOnIsRefused: an endpoint without a port,
// a URL, a port out of range or port 0 is refused by validate, naming the
// key.
func TestEndpointThatCannotBeListenedOnIsRefused(t *testing.T) {
	for _, ep := range []string{"localhost", "http://127.0.0.1:8088", "127.0.0.1:99999", "127.0.0.1:-1"} {
		cfg := createDefaultConfig().(*Config)
		cfg.ServerConfig.NetAddr.Endpoint = ep
		err := confmap.Validate(cfg)
		require.Error(t, err, ep)
		assert.Contains(t, err.Error(), "endpoint: must be host:port", ep)
	}
	// Port 0 listens on a port the kernel picks, which no client knows.
	for _, ep := range []string{"127.0.0.1:0", ":0", "localhost:00"} {
		cfg := createDefaultConfig().(*Config)
		cfg.ServerConfig.NetAddr.Endpoint = ep
		err := confmap.Validate(cfg)
		require.Error(t, err, ep)
		assert.Contains(t, err.Error(), "endpoint: port 0 would listen on a random port no client knows", ep)
	}
	for _, ep := range []string{"localhost:8088", ":8088", "[::1]:8088", "127.0.0.1:http"} {
		cfg := createDefaultConfig().(*Config)
		cfg.ServerConfig.NetAddr.Endpoint = ep
		assert.NoError(t, confmap.Validate(cfg), ep)
	}
}
