package sandboxtrace_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// grpcCollector is an OTLP/gRPC trace endpoint on 127.0.0.1 that answers
// each request as answer says, given the names of its spans and whether
// one is marked refuseKey. It keeps the names of the spans of requests it
// answers OK, and each request's span count.
type grpcCollector struct {
	coltrace.UnimplementedTraceServiceServer
	answer func(names []string, refused bool) (*coltrace.ExportTraceServiceResponse, error)

	mu       sync.Mutex
	requests []int
	written  []string
}

func (c *grpcCollector) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	names, refused := spanNames(req)
	resp, err := c.answer(names, refused)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests = append(c.requests, len(names))
	if err == nil {
		c.written = append(c.written, names...)
	}
	return resp, err
}

func (c *grpcCollector) seen() (requests []int, written []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.requests), slices.Clone(c.written)
}

// tenSpans sends tenSpans' spans to c, served until the test ends, through
// otlptracegrpc with its own retries off.
func (c *grpcCollector) tenSpans(t *testing.T, opts ...sdktrace.BatchSpanProcessorOption) *sdktrace.TracerProvider {
	t.Helper()
	addr := startGRPC(t, func(srv *grpc.Server) { coltrace.RegisterTraceServiceServer(srv, c) })
	exp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(addr),
		otlptracegrpc.WithInsecure(), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	require.NoError(t, err)
	return tenSpansTo(t, exp, opts...)
}

// startGRPC serves a gRPC server with what register adds on 127.0.0.1
// until the test ends, and returns its address.
func startGRPC(t *testing.T, register func(*grpc.Server)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	register(srv)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return l.Addr().String()
}

// refuseMarked answers a request with a marked span with err, as the
// collector's OTLP receiver answers its exporter's refusal.
func refuseMarked(err error) func([]string, bool) (*coltrace.ExportTraceServiceResponse, error) {
	return func(_ []string, refused bool) (*coltrace.ExportTraceServiceResponse, error) {
		if refused {
			return nil, err
		}
		return &coltrace.ExportTraceServiceResponse{}, nil
	}
}

// With otlptracegrpc, a span the collector cannot write is lost alone
// too: InvalidArgument (the receiver's answer to a refusal) and
// ResourceExhausted without RetryInfo (a message over its
// max_recv_msg_size_mib) are its 400 and 413. The collector's message,
// which may quote the records, is not shown.
func TestSpanProcessorGRPCRefusedSpanFailsAlone(t *testing.T) {
	for name, refusal := range map[string]error{
		"InvalidArgument":   status.Error(codes.InvalidArgument, "line over max_line_bytes: Bearer "+echoedSecret),
		"ResourceExhausted": status.Error(codes.ResourceExhausted, "grpc: received message larger than max: Bearer "+echoedSecret),
	} {
		t.Run(name, func(t *testing.T) {
			h := catchOTelErrors(t)
			col := &grpcCollector{answer: refuseMarked(refusal)}
			err := waitDone(t, "ForceFlush", flush(col.tenSpans(t)))
			require.ErrorContains(t, err, "sandboxtrace: 1 span lost (1 in total): ")
			require.ErrorContains(t, err, "code = "+name+" desc = ")
			assert.NotContains(t, err.Error(), echoedSecret)
			requests, written := col.seen()
			assertOnlyMarkedSpanLost(t, h, requests, written)
		})
	}
}

// A status otlptracegrpc retries (Unavailable, ResourceExhausted with
// RetryInfo) or one that says nothing of the spans (Internal) is neither
// split nor sent again by NewSpanProcessor: the batch is lost whole, in
// one request.
func TestSpanProcessorGRPCDoesNotSplitUnlessRefused(t *testing.T) {
	throttled, err := status.New(codes.ResourceExhausted, "slow down").
		WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Second)})
	require.NoError(t, err)
	for name, fail := range map[string]error{
		"Unavailable":                 status.Error(codes.Unavailable, "restarting"),
		"ResourceExhausted+RetryInfo": throttled.Err(),
		"Internal":                    status.Error(codes.Internal, "permanent error"),
	} {
		t.Run(name, func(t *testing.T) {
			col := &grpcCollector{answer: func([]string, bool) (*coltrace.ExportTraceServiceResponse, error) { return nil, fail }}
			tp := col.tenSpans(t, sdktrace.WithExportTimeout(300*time.Millisecond))
			err := waitDone(t, "ForceFlush", flush(tp))
			require.ErrorContains(t, err, "sandboxtrace: 10 spans lost (10 in total): ")
			requests, written := col.seen()
			assert.Empty(t, written)
			assert.Equal(t, []int{10}, requests, "one request, whole")
		})
	}
}

// partialReply is a reply that takes a request but rejects rejected of its
// spans.
func partialReply(rejected int64) *coltrace.ExportTraceServiceResponse {
	return &coltrace.ExportTraceServiceResponse{PartialSuccess: &coltrace.ExportTracePartialSuccess{
		RejectedSpans: rejected, ErrorMessage: "spans rejected",
	}}
}

// A partial success loses the spans it says it rejected, not the whole
// request: over gRPC and over HTTP. One with none rejected is a warning.
func TestSpanProcessorPartialSuccessCountsTheRejected(t *testing.T) {
	for _, tc := range []struct {
		rejected int64
		want     string
	}{
		{1, "sandboxtrace: 1 span lost (1 in total): "},
		{0, "sandboxtrace: 0 spans lost (0 in total): "},
	} {
		suffix := fmt.Sprintf("/%d rejected", tc.rejected)
		grpcCol := &grpcCollector{answer: func([]string, bool) (*coltrace.ExportTraceServiceResponse, error) {
			return partialReply(tc.rejected), nil
		}}
		httpCol := &pickyCollector{fail: func(w http.ResponseWriter, _ *http.Request, _ int) {
			reply, _ := proto.Marshal(partialReply(tc.rejected))
			_, _ = w.Write(reply)
		}}
		for name, tp := range map[string]func(t *testing.T) *sdktrace.TracerProvider{
			"grpc": func(t *testing.T) *sdktrace.TracerProvider { return grpcCol.tenSpans(t) },
			"http": func(t *testing.T) *sdktrace.TracerProvider { return tenSpans(t, startServer(t, httpCol)) },
		} {
			t.Run(name+suffix, func(t *testing.T) {
				err := waitDone(t, "ForceFlush", flush(tp(t)))
				require.ErrorContains(t, err, tc.want)
				require.ErrorContains(t, err, " spans rejected)")
				assert.Equal(t, 1, strings.Count(err.Error(), "lost"), "one request, one loss")
			})
		}
	}
}

// logPartialCollector answers every logs request with a partial success
// rejecting rejected records.
func logPartialCollector(rejected int64) *pickyCollector {
	return &pickyCollector{fail: func(w http.ResponseWriter, _ *http.Request, _ int) {
		reply, _ := proto.Marshal(&collogs.ExportLogsServiceResponse{PartialSuccess: &collogs.ExportLogsPartialSuccess{
			RejectedLogRecords: rejected, ErrorMessage: "records rejected",
		}})
		_, _ = w.Write(reply)
	}}
}

// NewLogProcessor counts the records a partial success rejected, not the
// whole request.
func TestLogProcessorPartialSuccessCountsTheRejected(t *testing.T) {
	catchOTelErrors(t)
	exp := logExporter(t, echoCase{}, startServer(t, logPartialCollector(1)))
	p := sandboxtrace.NewLogProcessor(exp, sandboxtrace.WithLogExportInterval(time.Hour))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
	emitN(lp, 5)
	ctx, cancel := context.WithTimeout(context.Background(), flushBound)
	defer cancel()
	err := lp.ForceFlush(ctx)
	require.ErrorContains(t, err, "sandboxtrace: 1 log record lost (1 in total): ")
	require.NoError(t, lp.Shutdown(ctx))
	assert.Equal(t, uint64(1), p.Lost())
}

// SyncLogProcessor: a partial success that rejected nothing is a warning
// and acknowledges the record; one that rejected it fails it.
func TestSyncLogProcessorPartialSuccess(t *testing.T) {
	for rejected, fails := range map[int64]bool{0: false, 1: true} {
		h := catchOTelErrors(t)
		p := sandboxtrace.NewSyncLogProcessor(logExporter(t, echoCase{}, startServer(t, logPartialCollector(rejected))), flushBound)
		var r sdklog.Record
		r.SetBody(attribute.StringValue("start"))
		err := p.OnEmit(context.Background(), &r)
		require.NoError(t, p.Shutdown(context.Background()))
		if fails {
			require.ErrorContains(t, err, "(1 logs rejected)")
			continue
		}
		require.NoError(t, err)
		require.Len(t, h.all(), 1, "the warning is reported")
		assert.ErrorContains(t, h.all()[0], "records rejected (0 logs rejected)")
	}
}

// grpcLogCollector is an OTLP/gRPC logs endpoint that refuses a request
// with a record marked refuseKey (InvalidArgument), and keeps the bodies
// of the records of the others.
type grpcLogCollector struct {
	collogs.UnimplementedLogsServiceServer

	mu      sync.Mutex
	written []string
}

func (c *grpcLogCollector) Export(_ context.Context, req *collogs.ExportLogsServiceRequest) (*collogs.ExportLogsServiceResponse, error) {
	bodies, refused := logBodies(req)
	if refused {
		return nil, status.Error(codes.InvalidArgument, "line over max_line_bytes")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.written = append(c.written, bodies...)
	return &collogs.ExportLogsServiceResponse{}, nil
}

// NewLogProcessor with otlploggrpc loses only the record the collector
// refuses, as with otlploghttp.
func TestLogProcessorGRPCRefusedRecordFailsAlone(t *testing.T) {
	catchOTelErrors(t)
	col := &grpcLogCollector{}
	addr := startGRPC(t, func(srv *grpc.Server) { collogs.RegisterLogsServiceServer(srv, col) })
	exp, err := otlploggrpc.New(context.Background(), otlploggrpc.WithEndpoint(addr),
		otlploggrpc.WithInsecure(), otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false}))
	require.NoError(t, err)
	p := sandboxtrace.NewLogProcessor(exp, sandboxtrace.WithLogExportInterval(time.Hour))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
	for _, b := range []string{"a", "b", "bad", "c", "d"} {
		var r log.Record
		r.SetBody(attribute.StringValue(b))
		if b == "bad" {
			r.AddAttributes(attribute.Bool(refuseKey, true))
		}
		lp.Logger("t").Emit(context.Background(), r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushBound)
	defer cancel()
	err = lp.ForceFlush(ctx)
	require.ErrorContains(t, err, "sandboxtrace: 1 log record lost (1 in total): ")
	require.ErrorContains(t, err, "code = InvalidArgument")
	require.NoError(t, lp.Shutdown(ctx))
	col.mu.Lock()
	defer col.mu.Unlock()
	assert.Equal(t, []string{"a", "b", "c", "d"}, col.written)
}
