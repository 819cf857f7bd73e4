package tlstest

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A client trusting Pool completes a handshake with a server using TLS on
// 127.0.0.1, and the files written load as a key pair.
func TestCertServesLoopback(t *testing.T) {
	c := New(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{c.TLS}, MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_, _ = io.WriteString(conn, "hi")
				_ = conn.Close()
			}()
		}
	}()
	dialer := &net.Dialer{Timeout: 10 * time.Second} // the handshake too
	conn, err := tls.DialWithDialer(dialer, "tcp", ln.Addr().String(), &tls.Config{RootCAs: c.Pool, MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	b, err := io.ReadAll(conn)
	require.NoError(t, err)
	require.Equal(t, "hi", string(b))
	_, err = tls.DialWithDialer(dialer, "tcp", ln.Addr().String(), &tls.Config{MinVersion: tls.VersionTLS12})
	require.Error(t, err, "a client without the pool refuses it")

	certFile, keyFile := c.WriteFiles(t, t.TempDir())
	_, err = tls.LoadX509KeyPair(certFile, keyFile)
	require.NoError(t, err)
}
