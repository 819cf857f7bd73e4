package sandboxauditreceiver

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/consumer"
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
