package sandboxauditreceiver

import (
	"bufio"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// TestStalledCompressedBodyIsPaced: a compressed body is paced by the
// bytes that arrive, from its first: gzip and deflate read their header
// before the handler runs, and a client that sent none was held until
// read_timeout, then answered 400 with the connection's addresses.
func TestStalledCompressedBodyIsPaced(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) {
		c.ServerConfig.ReadTimeout = time.Minute
		c.ServerConfig.WriteTimeout = time.Minute
	})
	tr.r.bodyGrace = 300 * time.Millisecond
	for _, enc := range []string{"gzip", "deflate", "zstd"} {
		for _, length := range []int{100, 100 << 10} {
			conn := openBody(t, tr, length, nil, "Content-Encoding: "+enc+"\r\n")
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err, "%s body of %d bytes sent none: not answered within seconds", enc, length)
			_ = resp.Body.Close()
			assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode, "%s body of %d bytes", enc, length)
		}
	}
}
