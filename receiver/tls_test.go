package sandboxauditreceiver

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/tlstest"
)

// selfSigned writes a certificate for 127.0.0.1 and its key to dir and
// returns their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	c := tlstest.New(t)
	certFile, keyFile = c.WriteFiles(t, dir)
	return certFile, keyFile, c.Pool
}

// TestTLSClientsAreServed: with tls set, a client that would negotiate
// HTTP/2 (as Go's and most others do over TLS) is served as well as one
// that speaks HTTP/1.1, both over HTTP/1.1: HTTP/2 was offered, but the
// server, which did not see the TLS connection, answered its frames as
// HTTP/1.1.
func TestTLSClientsAreServed(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil, func(c *Config) {
		tc := configtls.NewDefaultServerConfig()
		tc.CertFile, tc.KeyFile = certFile, keyFile
		c.ServerConfig.TLS = configoptional.Some(tc)
	})
	url := strings.Replace(tr.eventsURL(), "http://", "https://", 1)
	for i, h2 := range []bool{false, true} {
		client := &http.Client{Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: pool},
			ForceAttemptHTTP2: h2,
		}}
		resp, err := client.Post(url, contentTypeJSON, strings.NewReader(startJSON(i)))
		require.NoError(t, err, "HTTP/2: %v", h2)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "HTTP/2: %v", h2)
		assert.Equal(t, 1, resp.ProtoMajor, "HTTP/2 is not offered")
		client.CloseIdleConnections()
	}
	assert.Equal(t, 2, sink.LogRecordCount())
}
