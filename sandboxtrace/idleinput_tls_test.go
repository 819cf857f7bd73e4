package sandboxtrace

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// selfSignedTLS returns a server certificate for 127.0.0.1 and a pool that
// trusts it.
func selfSignedTLS(t *testing.T) (tls.Certificate, *x509.CertPool) {
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
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}

// heldWrites is a connection whose writes, while held, are kept and then
// sent in one write: two TLS records reach the peer in one segment.
type heldWrites struct {
	net.Conn
	held bool
	buf  []byte
}

func (c *heldWrites) Write(b []byte) (int, error) {
	if c.held {
		c.buf = append(c.buf, b...)
		return len(b), nil
	}
	return c.Conn.Write(b)
}

func (c *heldWrites) flush() error {
	c.held = false
	_, err := c.Conn.Write(c.buf)
	return err
}

// A reply nobody asked for that came over TLS in the same read as the
// last reply sits decrypted-to-be inside the TLS connection, where
// neither the exporter's buffer nor a peek at the socket sees it; it must
// not acknowledge the next request either.
func TestDirectLogExporterIgnoresAnUnsolicitedReplyOverTLS(t *testing.T) {
	cert, pool := selfSignedTLS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	const ok = "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n"
	sentTwice := make(chan struct{})
	var answered atomic.Int32
	readRequest := func(br *bufio.Reader) bool {
		req, err := http.ReadRequest(br)
		if err != nil {
			return false
		}
		_, err = io.Copy(io.Discard, req.Body)
		return err == nil
	}
	go func() {
		for n := 0; ; n++ {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			hw := &heldWrites{Conn: raw}
			c := tls.Server(hw, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func(first bool) {
				br := bufio.NewReader(c)
				if first {
					if readRequest(br) {
						answered.Add(1)
						// Two records, one segment.
						hw.held = true
						_, _ = io.WriteString(c, ok)
						_, _ = io.WriteString(c, ok)
						_ = hw.flush()
					}
					close(sentTwice)
					readRequest(br) // and never answer it
					return
				}
				for readRequest(br) {
					answered.Add(1)
					if _, err := io.WriteString(c, ok); err != nil {
						return
					}
				}
			}(n == 0)
		}
	}()

	exp, err := NewDirectLogExporter("https://" + ln.Addr().String() + "/v1/logs")
	require.NoError(t, err)
	exp.tls.RootCAs = pool
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	var r sdklog.Record
	r.SetBody(attribute.StringValue("start"))
	require.NoError(t, exp.Export(context.Background(), []sdklog.Record{r}))
	<-sentTwice
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, exp.Export(ctx, []sdklog.Record{r}))
	assert.Equal(t, int32(2), answered.Load(), "the second export's acknowledgement is the server's answer to it")
	require.NoError(t, exp.Export(ctx, []sdklog.Record{r}))
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, conns, 2, "a connection with nothing to read is kept")
}
