// Package tlstest makes a self-signed server certificate for 127.0.0.1, for
// tests that serve or reach TLS on loopback.
package tlstest // import "github.com/sandboxaudit/sandboxaudit/internal/testutil/tlstest"

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
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Cert is a server certificate for 127.0.0.1, valid for an hour either
// side of now.
type Cert struct {
	TLS  tls.Certificate // for a tls.Config's Certificates
	Pool *x509.CertPool  // trusts it
	// CertPEM and KeyPEM are the certificate and its EC private key.
	CertPEM, KeyPEM []byte
}

// New makes a fresh certificate and key.
func New(t testing.TB) Cert {
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
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return Cert{
		TLS:     tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert},
		Pool:    pool,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
}

// WriteFiles writes the certificate and key to dir (0600) and returns
// their paths, for configs that name files.
func (c Cert) WriteFiles(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, c.CertPEM, 0o600))
	require.NoError(t, os.WriteFile(keyFile, c.KeyPEM, 0o600))
	return certFile, keyFile
}
