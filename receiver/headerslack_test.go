package sandboxauditreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// headerSlack is what net/http reads past Server.MaxHeaderBytes before it
// refuses a request's headers (room for its read buffer); receiver/README.md
// and docs/limits.md give it.
const headerSlack = 4096

// sizedRequest is an events POST of event n whose request line and headers,
// through the blank line that ends them, take exactly size bytes.
func sizedRequest(t *testing.T, n, size int) string {
	t.Helper()
	head, _ := padRequest(n, 0)
	pad := size - len(head)
	require.Positive(t, pad)
	head, body := padRequest(n, pad)
	require.Len(t, head, size)
	return head + body
}

// TestHeaderBoundHasNetHTTPSlack: max_request_header_bytes is enforced by
// net/http, which serves a request line and headers of up to the value plus
// 4,096 bytes and answers 431 one byte past that.
func TestHeaderBoundHasNetHTTPSlack(t *testing.T) {
	for _, limit := range []int{minRequestHeaderBytes, defaultMaxRequestHeaderBytes} {
		tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) { c.MaxRequestHeaderBytes = limit })
		for i, c := range []struct {
			size int
			want string
		}{
			{limit, " 200 "},
			{limit + 1, " 200 "},
			{limit + headerSlack, " 200 "},
			{limit + headerSlack + 1, " 431 "},
			{limit + headerSlack + 100, " 431 "},
		} {
			conn := dial(t, tr)
			status, err := sendRaw(t, conn, sizedRequest(t, i+1, c.size), 10*time.Second)
			require.NoError(t, err)
			assert.Contains(t, status, c.want, "max_request_header_bytes %d, %d bytes of request line and headers", limit, c.size)
			_ = conn.Close()
		}
	}
}
