package sandboxauditreceiver

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// TestSmallBodiesHaveTheirOwnBudget: a stalled large body holds the whole
// of max_inflight_bytes; a usual single event still gets in, through the
// small-body budget, while a second large body gets 503.
func TestSmallBodiesHaveTheirOwnBudget(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil, func(c *Config) {
		c.ServerConfig.MaxRequestBodySize = 1 << 20
		c.MaxInflightBytes = 1<<20 + 1
	})
	openBody(t, tr, 1<<20, bytes.Repeat([]byte(" "), 1<<20-64<<10), "")
	waitFor(t, "the large body to fill the budget", func() bool {
		used, _ := tr.r.admit.Large().InUse()
		return used > 1<<20-64<<10
	})
	status, _, body := post(t, tr.eventsURL(), contentTypeJSON, []byte(startJSON(1)))
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, 1, logs.LogRecordCount())

	status, hdr, body := post(t, tr.eventsURL(), contentTypeNDJSON, ndjsonBody("large", 500))
	require.Equal(t, http.StatusServiceUnavailable, status, body)
	assert.Equal(t, "5", hdr.Get("Retry-After"))
}

// TestStalledSmallBodyIsCutFast: a small body that stalls is cut at
// small_body_timeout (408), long before read_timeout.
func TestStalledSmallBodyIsCutFast(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) {
		c.ServerConfig.ReadTimeout = time.Minute
		c.SmallBodyTimeout = 300 * time.Millisecond
	})
	conn := dial(t, tr)
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err := conn.Write([]byte("POST /v1/sandbox/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
		"Content-Length: 20000\r\n\r\n" + string(bytes.Repeat([]byte(" "), 10000))))
	require.NoError(t, err)
	start := time.Now()
	status, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err, "answered within seconds, not read_timeout's minute")
	assert.Contains(t, status, " 408 ")
	t.Logf("cut after %s", time.Since(start).Round(time.Millisecond))
}

// TestStalledTinyBodiesFreeTheirConnections: a body of 4 KiB or less
// holds no budget while it stalls, but it holds a connection, and a
// request in flight is never evicted. Clients that sent a few bytes of
// such bodies on every connection kept every other client waiting until
// read_timeout; they are cut at small_body_timeout (408), and the waiting
// client is served.
func TestStalledTinyBodiesFreeTheirConnections(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) {
		c.ServerConfig.ReadTimeout = time.Minute
		c.ServerConfig.WriteTimeout = time.Minute
		c.MaxConnections = 2
		c.SmallBodyTimeout = 300 * time.Millisecond
	})
	var stalled []net.Conn
	for range 2 {
		conn := openBody(t, tr, 100, []byte(`{"ver`), "")
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		stalled = append(stalled, conn)
	}

	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post(tr.eventsURL(), contentTypeJSON, strings.NewReader(startJSON(1)))
	require.NoError(t, err, "a client waiting behind stalled bodies is served within seconds")
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	for _, conn := range stalled {
		status, err := bufio.NewReader(conn).ReadString('\n')
		require.NoError(t, err)
		assert.Contains(t, status, " 408 ")
	}
}
