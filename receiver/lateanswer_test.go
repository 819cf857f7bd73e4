package sandboxauditreceiver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
)

// overrunningLogs is a pipeline that, like an exporter in the middle of a
// write, does not return when its context ends: it takes wait, then
// keeps the records.
type overrunningLogs struct {
	consumertest.LogsSink
	wait time.Duration
}

func (s *overrunningLogs) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	time.Sleep(s.wait)
	return s.LogsSink.ConsumeLogs(ctx, ld)
}

// TestPipelinePastWriteTimeoutStillAnswers: a pipeline that ignores its
// context and returns after write_timeout still gets the client an answer,
// a 503 to retry, instead of the connection closed without one. What it
// delivered is not delivered again: the retry counts it as a duplicate.
func TestPipelinePastWriteTimeoutStillAnswers(t *testing.T) {
	logs := &overrunningLogs{wait: 1500 * time.Millisecond}
	tr := startReceiver(t, logs, nil, func(c *Config) { c.ServerConfig.WriteTimeout = time.Second })
	body := []byte(startJSON(1))

	req, err := http.NewRequest(http.MethodPost, tr.eventsURL(), strings.NewReader(string(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentTypeJSON)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "the client got no answer")
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "5", resp.Header.Get("Retry-After"))

	// Past the first delivery, which kept the event, the retry is a
	// duplicate (bounded: the first delivery ends after its wait).
	var answer string
	for range 100 {
		var status int
		status, _, answer = post(t, tr.eventsURL(), contentTypeJSON, body)
		if status == http.StatusOK {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	assert.JSONEq(t, `{"accepted":0,"duplicates":1}`, answer)
	assert.Equal(t, 1, logs.LogRecordCount())
}

// wroteAfter is a ResponseWriter that tells each status written to it.
type wroteAfter struct {
	h     http.Header
	wrote chan int
}

func (w *wroteAfter) Header() http.Header         { return w.h }
func (w *wroteAfter) Write(b []byte) (int, error) { return len(b), nil }
func (w *wroteAfter) WriteHeader(status int) {
	select {
	case w.wrote <- status:
	default:
	}
}

// TestLateAnswerStoppedWhenThePipelinePanics: a pipeline that panics ends
// the handler without an answer (net/http recovers it and closes the
// connection). The late answer's timer, left running, wrote a 503 to the
// ResponseWriter after the handler had returned: net/http has by then put
// the connection's buffer back, and the write crashes the collector.
func TestLateAnswerStoppedWhenThePipelinePanics(t *testing.T) {
	const wt = 200 * time.Millisecond
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) { c.ServerConfig.WriteTimeout = wt })
	h := tr.r.handler(endpointEvents, func(*http.Request) reply { panic(http.ErrAbortHandler) })
	w := &wroteAfter{h: http.Header{}, wrote: make(chan int, 1)}
	req := httptest.NewRequest(http.MethodPost, tr.eventsURL(), strings.NewReader(startJSON(1)))
	require.PanicsWithValue(t, http.ErrAbortHandler, func() { h.ServeHTTP(w, req) })
	// Past when the timer would answer (wt less a twentieth), bounded.
	select {
	case status := <-w.wrote:
		t.Fatalf("the handler had returned, yet %d was written to its ResponseWriter", status)
	case <-time.After(5 * wt):
	}
}
