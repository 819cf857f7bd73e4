package sandboxtrace

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
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

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/tlstest"
)

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

// doubleReplyServer answers OTLP/HTTP requests on 127.0.0.1 with empty
// 200s. On its first connection it answers the first request twice, as a
// broken proxy might, then reads the next request there and never answers
// it; on any other connection it answers each request once.
type doubleReplyServer struct {
	ln        net.Listener
	mu        sync.Mutex
	conns     []net.Conn
	sentTwice chan struct{}
	answered  atomic.Int32
}

const emptyOK = "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n"

// startDoubleReplyServer serves each accepted connection through wrap,
// which returns the connection to serve and how it writes the two replies.
func startDoubleReplyServer(t *testing.T, wrap func(net.Conn) (net.Conn, func(net.Conn))) *doubleReplyServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &doubleReplyServer{ln: ln, sentTwice: make(chan struct{})}
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.conns {
			_ = c.Close()
		}
	})
	go func() {
		for n := 0; ; n++ {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			c, writeTwice := wrap(raw)
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			go s.serve(c, n == 0, writeTwice)
		}
	}()
	return s
}

func (s *doubleReplyServer) serve(c net.Conn, first bool, writeTwice func(net.Conn)) {
	br := bufio.NewReader(c)
	if first {
		if readRequest(br) {
			s.answered.Add(1)
			writeTwice(c)
		}
		close(s.sentTwice)
		readRequest(br) // and never answer it
		return
	}
	for readRequest(br) {
		s.answered.Add(1)
		if _, err := io.WriteString(c, emptyOK); err != nil {
			return
		}
	}
}

func readRequest(br *bufio.Reader) bool {
	req, err := http.ReadRequest(br)
	if err != nil {
		return false
	}
	_, err = io.Copy(io.Discard, req.Body)
	return err == nil
}

// exportAfterTheDoubleReply exports one record, waits until the server has
// answered it twice, and exports again: the second export must get the
// server's answer to it, not the stray second reply.
func exportAfterTheDoubleReply(t *testing.T, exp *DirectLogExporter, s *doubleReplyServer) {
	t.Helper()
	var r sdklog.Record
	r.SetBody(attribute.StringValue("start"))
	require.NoError(t, exp.Export(context.Background(), []sdklog.Record{r}))
	<-s.sentTwice
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	require.NoError(t, exp.Export(ctx, []sdklog.Record{r}))
	assert.Equal(t, int32(2), s.answered.Load(), "the second export's acknowledgement is the server's answer to it")
	require.NoError(t, exp.Export(ctx, []sdklog.Record{r}))
}

// A reply nobody asked for (a broken proxy answering one request twice)
// waits on the idle connection: it must not be read as the next request's
// acknowledgement. The next export goes on a new connection, where the
// server answers it.
func TestDirectLogExporterIgnoresAnUnsolicitedReply(t *testing.T) {
	s := startDoubleReplyServer(t, func(c net.Conn) (net.Conn, func(net.Conn)) {
		return c, func(c net.Conn) { _, _ = io.WriteString(c, emptyOK+emptyOK) }
	})
	exp, err := NewDirectLogExporter("http://" + s.ln.Addr().String() + "/v1/logs")
	require.NoError(t, err)
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	exportAfterTheDoubleReply(t, exp, s)
}

// A reply nobody asked for that came over TLS in the same read as the
// last reply sits decrypted-to-be inside the TLS connection, where
// neither the exporter's buffer nor a peek at the socket sees it; it must
// not acknowledge the next request either.
func TestDirectLogExporterIgnoresAnUnsolicitedReplyOverTLS(t *testing.T) {
	c := tlstest.New(t)
	s := startDoubleReplyServer(t, func(raw net.Conn) (net.Conn, func(net.Conn)) {
		hw := &heldWrites{Conn: raw}
		sc := tls.Server(hw, &tls.Config{Certificates: []tls.Certificate{c.TLS}, MinVersion: tls.VersionTLS12})
		return sc, func(c net.Conn) {
			// Two records, one segment.
			hw.held = true
			_, _ = io.WriteString(c, emptyOK)
			_, _ = io.WriteString(c, emptyOK)
			_ = hw.flush()
		}
	})
	exp, err := NewDirectLogExporter("https://" + s.ln.Addr().String() + "/v1/logs")
	require.NoError(t, err)
	exp.tls.RootCAs = c.Pool
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	exportAfterTheDoubleReply(t, exp, s)
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Len(t, s.conns, 2, "a connection with nothing to read is kept")
}
