package sandboxauditreceiver

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// slowLogs is a pipeline slower than the server's write_timeout: it
// returns when its context ends, or after a while when it never does.
type slowLogs struct{ wait time.Duration }

func (slowLogs) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (s slowLogs) ConsumeLogs(ctx context.Context, _ plog.Logs) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.wait):
		return nil
	}
}

func (s slowLogs) ConsumeTraces(ctx context.Context, _ ptrace.Traces) error {
	return s.ConsumeLogs(ctx, plog.NewLogs())
}

// A pipeline slower than write_timeout must still get the client an
// answer, a 503 to retry, not a connection closed without one (the
// default exporter's 30s push bound equals confighttp's 30s write_timeout).
func TestPipelineSlowerThanWriteTimeoutAnswers503(t *testing.T) {
	slow := slowLogs{wait: 10 * time.Second}
	tr := startReceiver(t, slow, nil, func(c *Config) { c.ServerConfig.WriteTimeout = time.Second })
	status, hdr, body := post(t, tr.eventsURL(), contentTypeJSON, []byte(startJSON(1)))
	assert.Equal(t, http.StatusServiceUnavailable, status, body)
	assert.Equal(t, "5", hdr.Get("Retry-After"))
	assert.True(t, strings.HasPrefix(body, "the collector pipeline refused the data for now"), body)

	tt := startReceiver(t, nil, slow, func(c *Config) { c.ServerConfig.WriteTimeout = time.Second })
	status, _, body = post(t, tt.tracesURL(), contentTypeJSON,
		[]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"x"}]}]}]}`))
	assert.Equal(t, http.StatusServiceUnavailable, status, body)
}

// A body withheld until read_timeout must still get its 408 when
// write_timeout is no longer (the defaults are 30s both): the server's
// write deadline, counted from the same moment, passed before the answer
// was written, and the client saw the connection closed without one.
func TestWithheldBodyIs408WithinWriteTimeout(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) {
		c.ServerConfig.ReadTimeout = 2 * time.Second
		c.ServerConfig.WriteTimeout = 2 * time.Second
		c.SmallBodyTimeout = 0
	})
	for _, size := range []int{1000, 20000} { // unpaced, and a small body
		body := ndjsonBody("withheld", 200)[:size]
		conn := openBody(t, tr, size, body[:size/2], "")
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err, "a %d-byte body withheld got no answer", size)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode, "a %d-byte body", size)
	}
}
