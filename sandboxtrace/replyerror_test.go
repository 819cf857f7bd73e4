package sandboxtrace_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// echoedSecret stands for a credential of a request that a collector or a
// proxy echoes in its error reply.
var echoedSecret = redacttest.BearerToken

// echoBody is the reply body of echoingServer: the secret, and a terminal
// escape that must not reach a log as it is.
var echoBody = "refused: Authorization: Bearer " + echoedSecret + " \x1b[2J"

// echoingServer answers every request with status and echoBody; status
// is written as it is, reason phrase included, so the test controls it.
type echoingServer struct{ status string }

func (s echoingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer func() { _ = conn.Close() }()
	_, _ = fmt.Fprintf(buf, "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		s.status, len(echoBody), echoBody)
	_ = buf.Flush()
}

// echoCase is a reply and what the errors must say of it.
type echoCase struct {
	status string // as the server writes it
	says   string // in every error's text
	retry  bool   // the exporter's own retries on, briefly
}

var echoCases = map[string]echoCase{
	"400": {status: "400 Bad Request", says: "400 Bad Request (body: "},
	// A reason phrase is the server's text too: escaped.
	"400 with an escape in its reason": {status: "400 Bad \x1b[31mRequest", says: `400 Bad \x1b[31mRequest (body: `},
	"413":                              {status: "413 Request Entity Too Large", says: "413 Request Entity Too Large (body: "},
	"500 after the retries":            {status: "500 Internal Server Error", says: "500 Internal Server Error (body: ", retry: true},
	"503 after the retries":            {status: "503 Service Unavailable", says: "retry-able request failure: body: ", retry: true},
}

// quickRetry is the exporters' retries, over in a moment.
var quickRetry = otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 10 * time.Millisecond,
	MaxInterval: 10 * time.Millisecond, MaxElapsedTime: 100 * time.Millisecond}

// checkScrubbed asserts err says c's status and the body's length, but
// neither the echoed secret nor a raw control character, and still wraps
// the exporter's own error.
func checkScrubbed(t *testing.T, c echoCase, err error) {
	t.Helper()
	require.Error(t, err)
	text := err.Error()
	assert.NotContains(t, text, echoedSecret)
	assert.NotContains(t, text, "\x1b")
	assert.Contains(t, text, c.says)
	assert.Contains(t, text, fmt.Sprintf("body: %d bytes, not shown", len(strings.TrimSpace(echoBody))))
	assert.True(t, inChain(err, func(e error) bool { return strings.Contains(e.Error(), echoedSecret) }),
		"the exporter's error is still in the chain: %v", err)
}

// inChain reports whether f holds for err or an error it wraps.
func inChain(err error, f func(error) bool) bool {
	if err == nil {
		return false
	}
	if f(err) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if inChain(e, f) {
				return true
			}
		}
	case interface{ Unwrap() error }:
		return inChain(u.Unwrap(), f)
	}
	return false
}

// checkHandled asserts the error handler got errors, each scrubbed.
func checkHandled(t *testing.T, c echoCase, h *handled) {
	t.Helper()
	require.NotEmpty(t, h.all())
	for _, e := range h.all() {
		checkScrubbed(t, c, e)
	}
}

// NewSpanProcessor's errors, handled and returned by ForceFlush, show a
// reply body's length, never the body, which may echo the request.
func TestSpanProcessorErrorsLeaveOutTheReplyBody(t *testing.T) {
	for name, c := range echoCases {
		t.Run(name, func(t *testing.T) {
			h := catchOTelErrors(t)
			retry := otlptracehttp.RetryConfig{Enabled: false}
			if c.retry {
				retry = quickRetry
			}
			exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(startServer(t, echoingServer{c.status})),
				otlptracehttp.WithInsecure(), otlptracehttp.WithRetry(retry))
			require.NoError(t, err)
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(
				sandboxtrace.NewSpanProcessor(exp, sdktrace.WithBatchTimeout(time.Hour))))
			t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			_, sp := tp.Tracer("t").Start(context.Background(), "flushed")
			sp.End()
			err = waitDone(t, "ForceFlush", flush(tp))
			checkScrubbed(t, c, err)
			assert.ErrorContains(t, err, "sandboxtrace: 1 span lost (1 in total): ")
			// The batch processor's worker hands its export's error to
			// the handler: at Shutdown, the last one.
			_, sp = tp.Tracer("t").Start(context.Background(), "shut down")
			sp.End()
			require.NoError(t, tp.Shutdown(context.Background()))
			checkHandled(t, c, h)
		})
	}
}

// logExporter is otlploghttp to addr, its retries as c asks.
func logExporter(t *testing.T, c echoCase, addr string) sdklog.Exporter {
	t.Helper()
	retry := otlploghttp.RetryConfig{Enabled: false}
	if c.retry {
		retry = otlploghttp.RetryConfig(quickRetry)
	}
	exp, err := otlploghttp.New(context.Background(), otlploghttp.WithEndpoint(addr),
		otlploghttp.WithInsecure(), otlploghttp.WithRetry(retry))
	require.NoError(t, err)
	return exp
}

// NewLogProcessor's errors, handled and returned by ForceFlush, show a
// reply body's length, never the body.
func TestLogProcessorErrorsLeaveOutTheReplyBody(t *testing.T) {
	for name, c := range echoCases {
		t.Run(name, func(t *testing.T) {
			h := catchOTelErrors(t)
			p := sandboxtrace.NewLogProcessor(logExporter(t, c, startServer(t, echoingServer{c.status})),
				sandboxtrace.WithLogExportInterval(time.Hour))
			lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
			var r log.Record
			r.SetBody(attribute.StringValue("start"))
			lp.Logger("t").Emit(context.Background(), r)
			ctx, cancel := context.WithTimeout(context.Background(), flushBound)
			defer cancel()
			err := lp.ForceFlush(ctx)
			checkScrubbed(t, c, err)
			assert.ErrorContains(t, err, "sandboxtrace: 1 log record lost (1 in total): ")
			require.NoError(t, lp.Shutdown(ctx))
			checkHandled(t, c, h)
		})
	}
}

// An operation whose start event a SyncLogProcessor could not get
// acknowledged fails with an error that shows a reply body's length,
// never the body, and still wraps ErrStartNotRecorded. A best-effort
// session sharing the provider reports the same to the error handler.
func TestSyncLogProcessorErrorsLeaveOutTheReplyBody(t *testing.T) {
	for name, c := range echoCases {
		t.Run(name, func(t *testing.T) {
			h := catchOTelErrors(t)
			lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(
				sandboxtrace.NewSyncLogProcessor(logExporter(t, c, startServer(t, echoingServer{c.status})), flushBound)))
			t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
			rec := newRecorder(t)

			sync := rec.session(t, sandboxtrace.WithLoggerProvider(lp), sandboxtrace.WithDelivery(sandboxtrace.DeliverySync))
			ran := false
			err := sync.StartSandbox(context.Background(), func(context.Context) error { ran = true; return nil })
			assert.False(t, ran)
			require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
			checkScrubbed(t, c, err)

			best := rec.session(t, sandboxtrace.WithLoggerProvider(lp))
			require.NoError(t, best.StartSandbox(context.Background(), func(context.Context) error { return nil }))
			checkHandled(t, c, h)
		})
	}
}
