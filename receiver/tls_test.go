package sandboxauditreceiver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// selfSigned writes a certificate for 127.0.0.1 and its key to dir and
// returns their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
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
