package sandboxauditreceiver

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// A client flooding the TLS port with plain HTTP gets net/http's handshake
// error logged per connection. Under the collector's log sampling (10 of a
// message per tick, then 1 in 100) the lines stay bounded only if the
// message does not carry the client's address and port.
func TestServerErrorsAreSampled(t *testing.T) {
	certFile, keyFile, _ := selfSigned(t, t.TempDir())
	core, logs := observer.New(zapcore.DebugLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(zapcore.NewSamplerWithOptions(core, time.Hour, 10, 100))
	tr := startReceiverWith(t, set, new(consumertest.LogsSink), nil, func(c *Config) {
		tc := configtls.NewDefaultServerConfig()
		tc.CertFile, tc.KeyFile = certFile, keyFile
		c.ServerConfig.TLS = configoptional.Some(tc)
	})
	const conns = 60
	for range conns {
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Post(tr.eventsURL(), contentTypeJSON, strings.NewReader(startJSON(1)))
		if err == nil {
			_ = resp.Body.Close()
		}
	}
	// The server may log after answering: wait (bounded) until the count
	// stops moving.
	for i, last, still := 0, -1, 0; i < 300 && still < 5; i++ {
		time.Sleep(10 * time.Millisecond)
		if n := logs.Len(); n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
	require.NotZero(t, logs.Len(), "the handshake errors are logged")
	require.LessOrEqual(t, logs.Len(), 12, "one line per connection: %v", logs.All()[0].Message)
}
