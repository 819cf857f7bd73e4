package sandboxtrace_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
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
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// refuseKey marks a span or log record the picky collector cannot write.
const refuseKey = "test.refuse"

// pickyCollector is an OTLP/HTTP endpoint for traces and logs that
// refuses a whole request (400 with a Status, nothing written) when an
// item in it carries refuseKey, as the collector refuses a request with
// an event over max_line_bytes; otherwise it keeps the items' names (a
// span's name, a record's body). fail, when set, answers request n (from
// 1) itself instead. It notes each request's item count.
type pickyCollector struct {
	fail func(w http.ResponseWriter, r *http.Request, n int)

	mu       sync.Mutex
	requests []int
	written  []string
}

func (c *pickyCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	names, refused := c.decode(r.URL.Path, body)
	c.mu.Lock()
	c.requests = append(c.requests, len(names))
	n := len(c.requests)
	if c.fail == nil && !refused {
		c.written = append(c.written, names...)
	}
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	switch {
	case c.fail != nil:
		c.fail(w, r, n)
	case refused:
		refuse(w)
	}
}

// refuse answers as the collector does a request with a line over
// max_line_bytes.
func refuse(w http.ResponseWriter) {
	reply, _ := proto.Marshal(&spb.Status{Code: 3, Message: "the event's line would be over max_line_bytes"})
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(reply)
}

// decode returns the names of a traces or logs request's items, and
// whether one is marked refuseKey.
func (c *pickyCollector) decode(path string, body []byte) (names []string, refused bool) {
	if path == "/v1/logs" {
		var req collogs.ExportLogsServiceRequest
		_ = proto.Unmarshal(body, &req)
		return logBodies(&req)
	}
	var req coltrace.ExportTraceServiceRequest
	_ = proto.Unmarshal(body, &req)
	return spanNames(&req)
}

// logBodies returns the bodies of req's records, and whether one is
// marked refuseKey.
func logBodies(req *collogs.ExportLogsServiceRequest) (bodies []string, refused bool) {
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				bodies = append(bodies, lr.GetBody().GetStringValue())
				for _, kv := range lr.GetAttributes() {
					refused = refused || kv.GetKey() == refuseKey
				}
			}
		}
	}
	return bodies, refused
}

// spanNames returns the names of req's spans, and whether one is marked
// refuseKey.
func spanNames(req *coltrace.ExportTraceServiceRequest) (names []string, refused bool) {
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				names = append(names, sp.GetName())
				for _, kv := range sp.GetAttributes() {
					refused = refused || kv.GetKey() == refuseKey
				}
			}
		}
	}
	return names, refused
}

func (c *pickyCollector) seen() (requests []int, written []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.requests), slices.Clone(c.written)
}

// tenSpans ends spans s0 … s9 on a provider exporting through
// NewSpanProcessor and otlptracehttp (its own retries off) to addr, s3
// marked refuseKey, and returns the provider; they wait for a ForceFlush
// to go in one batch.
func tenSpans(t *testing.T, addr string, opts ...sdktrace.BatchSpanProcessorOption) *sdktrace.TracerProvider {
	t.Helper()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(addr),
		otlptracehttp.WithInsecure(), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	require.NoError(t, err)
	return tenSpansTo(t, exp, opts...)
}

// tenSpansTo is tenSpans through exp.
func tenSpansTo(t *testing.T, exp sdktrace.SpanExporter, opts ...sdktrace.BatchSpanProcessorOption) *sdktrace.TracerProvider {
	t.Helper()
	opts = append([]sdktrace.BatchSpanProcessorOption{sdktrace.WithBatchTimeout(time.Hour)}, opts...)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sandboxtrace.NewSpanProcessor(exp, opts...)))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	for i := range 10 {
		_, sp := tp.Tracer("t").Start(context.Background(), "s"+string(rune('0'+i)))
		if i == 3 {
			sp.SetAttributes(attribute.Bool(refuseKey, true))
		}
		sp.End()
	}
	return tp
}

// A span the collector cannot write, sharing a batch with nine others,
// is lost alone: the refused request goes again in halves, and the nine
// are written once each.
func TestSpanProcessorRefusedSpanFailsAlone(t *testing.T) {
	h := catchOTelErrors(t)
	col := &pickyCollector{}
	err := waitDone(t, "ForceFlush", flush(tenSpans(t, startServer(t, col))))
	require.ErrorContains(t, err, "sandboxtrace: 1 span lost (1 in total): ")
	require.ErrorContains(t, err, "400 Bad Request")
	requests, written := col.seen()
	assertOnlyMarkedSpanLost(t, h, requests, written)
}

// assertOnlyMarkedSpanLost checks that of ten spans only s3, the refused
// one, was lost, after one whole request and at most 2n-1 in all.
func assertOnlyMarkedSpanLost(t *testing.T, h *handled, requests []int, written []string) {
	t.Helper()
	slices.Sort(written)
	assert.Equal(t, []string{"s0", "s1", "s2", "s4", "s5", "s6", "s7", "s8", "s9"}, written)
	assert.Equal(t, 10, requests[0], "the batch went in one request first")
	assert.LessOrEqual(t, len(requests), 2*10-1)
	for _, e := range h.all() {
		assert.NotContains(t, e.Error(), "spans lost", "only the refused span is lost")
	}
}

// A retryable reply or a cut connection says nothing of the spans: the
// request is not split (the retries send it whole), and the batch is lost
// whole when they give up.
func TestSpanProcessorDoesNotSplitUnlessRefused(t *testing.T) {
	for name, fail := range map[string]func(w http.ResponseWriter, r *http.Request, n int){
		"503": func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(http.StatusServiceUnavailable) },
		"cut connection": func(w http.ResponseWriter, _ *http.Request, _ int) {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			col := &pickyCollector{fail: fail}
			tp := tenSpans(t, startServer(t, col), sdktrace.WithExportTimeout(300*time.Millisecond))
			err := waitDone(t, "ForceFlush", flush(tp))
			require.ErrorContains(t, err, "sandboxtrace: 10 spans lost (10 in total): ")
			requests, written := col.seen()
			assert.Empty(t, written)
			require.NotEmpty(t, requests)
			for _, n := range requests {
				assert.Equal(t, 10, n, "every request holds the whole batch")
			}
		})
	}
}

// The halves go within the export's timeout: once it has passed, the
// halves not sent yet are lost, counted, with the refusal and the timeout.
func TestSpanProcessorSplitsWithinTheExportTimeout(t *testing.T) {
	col := &pickyCollector{fail: func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			refuse(w)
			return
		}
		select { // the first half's request outlasts the export's timeout
		case <-r.Context().Done():
		case <-time.After(flushBound):
		}
	}}
	tp := tenSpans(t, startServer(t, col), sdktrace.WithExportTimeout(300*time.Millisecond))
	err := waitDone(t, "ForceFlush", flush(tp))
	require.ErrorContains(t, err, "sandboxtrace: 5 spans lost (5 in total): ")
	require.ErrorContains(t, err, "sandboxtrace: 5 spans lost (10 in total): ")
	require.ErrorContains(t, err, "400 Bad Request")
	require.ErrorContains(t, err, "processor export timeout\n") // the SDK's cause, then the refusal
	requests, _ := col.seen()
	assert.Equal(t, []int{10, 5}, requests, "the second half is not sent")
}

// NewLogProcessor (best effort) loses only the record the collector
// cannot write, not the start events of other sessions in its batch.
func TestLogProcessorRefusedRecordFailsAlone(t *testing.T) {
	catchOTelErrors(t)
	col := &pickyCollector{}
	exp, err := otlploghttp.New(context.Background(), otlploghttp.WithEndpoint(startServer(t, col)),
		otlploghttp.WithInsecure(), otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}))
	require.NoError(t, err)
	p := sandboxtrace.NewLogProcessor(exp, sandboxtrace.WithLogExportInterval(time.Hour))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
	l := lp.Logger("t")
	for _, b := range []string{"a", "b", "bad", "c", "d"} {
		var r log.Record
		r.SetBody(attribute.StringValue(b))
		if b == "bad" {
			r.AddAttributes(attribute.Bool(refuseKey, true))
		}
		l.Emit(context.Background(), r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushBound)
	defer cancel()
	err = lp.ForceFlush(ctx)
	require.ErrorContains(t, err, "sandboxtrace: 1 log record lost (1 in total): ")
	require.ErrorContains(t, err, "400 Bad Request")
	require.NoError(t, lp.Shutdown(ctx))
	requests, written := col.seen()
	assert.Equal(t, []string{"a", "b", "c", "d"}, written)
	assert.Equal(t, 5, requests[0], "the batch went in one request first")
	assert.Equal(t, uint64(1), p.Lost())
}
