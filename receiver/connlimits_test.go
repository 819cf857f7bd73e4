package sandboxauditreceiver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// padRequest is an events POST of event n with an X-Pad header of pad
// bytes: its request line and headers through the blank line, and its body.
func padRequest(n, pad int) (head, body string) {
	body = startJSON(n)
	head = fmt.Sprintf("POST /v1/sandbox/events HTTP/1.1\r\nHost: x\r\nX-Pad: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		strings.Repeat("a", pad), len(body))
	return head, body
}

// rawRequest writes an events POST of one event with an X-Pad header of
// pad bytes on conn and returns the status line of the answer, read within
// wait.
func rawRequest(t *testing.T, conn net.Conn, pad int, wait time.Duration) (string, error) {
	t.Helper()
	head, body := padRequest(1, pad)
	return sendRaw(t, conn, head+body, wait)
}

// sendRaw writes req on conn and returns the status line of the answer,
// read within wait.
func sendRaw(t *testing.T, conn net.Conn, req string, wait time.Duration) (string, error) {
	t.Helper()
	require.NoError(t, conn.SetDeadline(time.Now().Add(wait)))
	if _, err := conn.Write([]byte(req)); err != nil {
		return "", err
	}
	return bufio.NewReader(conn).ReadString('\n')
}

func dial(t *testing.T, tr *testReceiver) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", tr.r.addr.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// TestOversizedHeadersGet431: headers past max_request_header_bytes are
// refused with 431 (net/http's own bound, 1 MiB, let each stalled
// connection hold about 2.5 MB); headers under it are served.
func TestOversizedHeadersGet431(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	status, err := rawRequest(t, dial(t, tr), 8<<10, 10*time.Second)
	require.NoError(t, err)
	assert.Contains(t, status, " 200 ", "8 KiB of headers are under the 16 KiB default")

	status, err = rawRequest(t, dial(t, tr), 64<<10, 10*time.Second)
	require.NoError(t, err)
	assert.Contains(t, status, " 431 ", "64 KiB of headers are over the 16 KiB default")
}

// TestConnectionsBeyondMaxWait: with max_connections open, a further
// connection is not served until one of them closes, so connections that
// send nothing cannot add memory without bound.
func TestConnectionsBeyondMaxWait(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) { c.MaxConnections = 2 })
	first := dial(t, tr)
	_ = dial(t, tr)

	third := dial(t, tr) // the kernel's backlog accepts it; the server does not
	_, err := rawRequest(t, third, 0, 300*time.Millisecond)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded),
		"a third connection must wait while two are open, got %v", err)

	require.NoError(t, first.Close())
	require.NoError(t, third.SetDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	require.NoError(t, err, "served once a slot is free")
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// A body that stalls is cut after the grace period, not at read_timeout:
// a few hundred connections that send a little and stall held the budget
// for 30 s and locked larger requests out. Sent fast and then stopped, or
// trickled below min_body_rate, it is cut alike.
func TestStalledBodyIsCut(t *testing.T) {
	for name, trickle := range map[string]bool{"fast, then stopped": false, "trickled": true} {
		sent := 200000 // at 4 KiB/s, the rate alone would allow 49 s
		if trickle {
			sent = 4500
		}
		t.Run(name, func(t *testing.T) {
			tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) {
				c.ServerConfig.ReadTimeout = time.Minute
				c.MinBodyRate = 4 << 10
			})
			tr.r.bodyGrace = 200 * time.Millisecond
			conn := dial(t, tr)
			require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
			_, err := conn.Write([]byte("POST /v1/sandbox/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
				"Content-Length: 1000000\r\n\r\n" + strings.Repeat(" ", sent)))
			require.NoError(t, err)
			// A byte every 50 ms keeps arriving (well within the grace)
			// but at 20 B/s: the rate cuts it after about 1.3 s.
			cut := !trickle
			for i := 0; trickle && i < 100; i++ {
				time.Sleep(50 * time.Millisecond)
				if _, err := conn.Write([]byte(" ")); err != nil {
					cut = true
					break
				}
			}
			require.True(t, cut, "a trickle below min_body_rate went on for 5 s")
			status, err := bufio.NewReader(conn).ReadString('\n')
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "cut within seconds, not read_timeout's minute")
			if err == nil || !trickle {
				// A trickler's late bytes may reset the connection
				// before its 408 is read; the cut is what counts.
				require.NoError(t, err)
				assert.Contains(t, status, " 408 ")
			}
		})
	}
}

// dialFrom connects to the receiver from the loopback address local.
func dialFrom(t *testing.T, tr *testReceiver, local string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	conn, err := d.Dial("tcp", tr.r.addr.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// TestOneAddressCannotHoldEveryConnection: a client that holds all of
// max_connections, idle after a request, trickling a body or sending
// nothing, does not lock out a client on another address: that one takes
// the place of one of the first client's connections, and is served. A
// further connection of the first client's waits.
func TestOneAddressCannotHoldEveryConnection(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) {
		c.MaxConnections = 6
		c.ServerConfig.ReadTimeout = time.Minute
		c.ServerConfig.WriteTimeout = time.Minute
		c.SmallBodyTimeout = 0
	})
	const attacker = "127.0.0.2"
	for i := range 6 {
		conn := dialFrom(t, tr, attacker)
		switch i % 3 {
		case 0: // idle on keep-alive after a request
			body := startJSON(100 + i)
			_, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				tr.r.cfg.EventsPath, len(body), body)
			require.NoError(t, err)
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			_ = resp.Body.Close()
		case 1: // a small body, withheld
			_, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", tr.r.cfg.EventsPath)
			require.NoError(t, err)
		}
	}
	waitFor(t, "the six connections to be served", func() bool { return tr.r.inflight.Count() >= 2 })
	extra := dialFrom(t, tr, attacker)
	for i := range 3 {
		status, err := rawRequest(t, dialFrom(t, tr, "127.0.0.1"), 0, 10*time.Second)
		require.NoError(t, err, "request %d of another address was not served", i)
		assert.Contains(t, status, " 200 ")
	}
	assert.Equal(t, 2, tr.r.inflight.Count(), "connections without a request in flight give their place first")
	_, err := rawRequest(t, extra, 0, 300*time.Millisecond)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "the first client's seventh connection must wait, got %v", err)
}

// TestEvictionsAreCounted: each connection closed at max_connections to
// make room for another address's is counted, by the state it was in, and
// logged at Debug with the client it belonged to. (Which state goes first
// is TestConnListenerTakesAnIdleConnectionFirst's.)
func TestEvictionsAreCounted(t *testing.T) {
	set, tel := recordingSettings(t)
	core, logs := observer.New(zap.DebugLevel)
	set.Logger = zap.New(core)
	tr := startReceiverWith(t, set, new(consumertest.LogsSink), nil, func(c *Config) { c.MaxConnections = 3 })
	const attacker = "127.0.0.2"
	var held []net.Conn
	for range 3 {
		held = append(held, dialFrom(t, tr, attacker))
	}
	// The first newcomer leaves the attacker two places; the second, one.
	for _, local := range []string{"127.0.0.1", "127.0.0.3"} {
		status, err := rawRequest(t, dialFrom(t, tr, local), 0, 10*time.Second)
		require.NoError(t, err, "a newcomer from %s was not served", local)
		assert.Contains(t, status, " 200 ")
	}
	assert.Equal(t, map[string]int64{"reason=new": 2},
		counterValues(t, tel, "otelcol_sandboxaudit_receiver_connections_evicted"))
	closed := 0
	for _, c := range held {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
		if _, err := c.Read(make([]byte, 1)); errors.Is(err, io.EOF) {
			closed++
		}
	}
	assert.Equal(t, 2, closed, "the two connections counted were closed")
	logged := logs.FilterMessageSnippet("max_connections").All()
	require.Len(t, logged, 2)
	for _, e := range logged {
		assert.Equal(t, zap.DebugLevel, e.Level)
		assert.Equal(t, map[string]any{"reason": "new", "client": attacker}, e.ContextMap())
	}
}
