package sandboxtrace_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// logsServer is an OTLP/HTTP logs endpoint on 127.0.0.1 that keeps what
// it is sent and answers with reply.
type logsServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []*logspb.LogRecord
	scopes []*logspb.ScopeLogs
	conns  atomic.Int32
	reply  func(w http.ResponseWriter)
}

func newLogsServer(t *testing.T, reply func(w http.ResponseWriter)) *logsServer {
	t.Helper()
	ls := &logsServer{reply: reply}
	ls.srv = httptest.NewUnstartedServer(http.HandlerFunc(ls.serve))
	ls.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			ls.conns.Add(1)
		}
	}
	ls.srv.Start()
	t.Cleanup(ls.srv.Close)
	return ls
}

func (ls *logsServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req collogs.ExportLogsServiceRequest
	if err != nil || r.URL.Path != "/v1/logs" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	ls.mu.Lock()
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			ls.got = append(ls.got, sl.GetLogRecords()...)
			ls.scopes = append(ls.scopes, sl)
		}
	}
	ls.mu.Unlock()
	if ls.reply != nil {
		ls.reply(w)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(nil) // an empty ExportLogsServiceResponse
}

func (ls *logsServer) records() []*logspb.LogRecord {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return append([]*logspb.LogRecord(nil), ls.got...)
}

func newDirect(t *testing.T, url string) *sandboxtrace.DirectLogExporter {
	t.Helper()
	exp, err := sandboxtrace.NewDirectLogExporter(url)
	require.NoError(t, err)
	return exp
}

func attrString(lr *logspb.LogRecord, key string) string {
	for _, kv := range lr.GetAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

func TestDirectLogExporterCarriesASessionsRecords(t *testing.T) {
	ls := newLogsServer(t, nil)
	rec := newRecorder(t)
	s := rec.session(t, sandboxtrace.WithLogExporter(newDirect(t, ls.srv.URL+"/v1/logs")),
		sandboxtrace.WithDelivery(sandboxtrace.DeliverySyncFinish), sandboxtrace.WithOutputCapture(0))
	for range 3 {
		_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"echo", "hi"}},
			func(context.Context) (sandboxtrace.ExecResult, error) {
				return sandboxtrace.ExecResult{Stdout: []byte("hi\n")}, nil
			})
		require.NoError(t, err)
	}
	require.NoError(t, s.Shutdown(context.Background()))

	got := ls.records()
	require.Len(t, got, 6, "a start and a finish per operation")
	assert.EqualValues(t, 1, ls.conns.Load(), "one kept-alive connection")
	spans := rec.ops()
	require.Len(t, spans, 3)
	for i, lr := range got {
		op := spans[i/2]
		phase := []string{"start", "finish"}[i%2]
		var ev auditevent.Event
		require.NoError(t, (auditevent.DecodeOptions{}).DecodeInto([]byte(lr.GetBody().GetStringValue()), &ev), "record %d body", i)
		assert.Equal(t, phase, ev.Phase.String(), "record %d", i)
		assert.Equal(t, phase, attrString(lr, semconv.AttrEventPhase), "record %d", i)
		assert.Equal(t, "exec", attrString(lr, semconv.AttrOperation), "record %d", i)
		assert.Equal(t, s.ID().String(), attrString(lr, semconv.AttrSessionID), "record %d", i)
		assert.Equal(t, op.SpanContext.SpanID().String(), ev.SpanID, "record %d", i)
		sid, tid := op.SpanContext.SpanID(), op.SpanContext.TraceID()
		assert.Equal(t, sid[:], lr.GetSpanId(), "record %d", i)
		assert.Equal(t, tid[:], lr.GetTraceId(), "record %d", i)
		assert.NotZero(t, lr.GetTimeUnixNano(), "record %d", i)
	}
	var stdout []byte
	for _, kv := range got[1].GetAttributes() {
		if kv.GetKey() == semconv.AttrExecStdoutBytes {
			stdout = kv.GetValue().GetBytesValue()
		}
	}
	assert.Equal(t, []byte("hi\n"), stdout, "the finish carries the captured output as bytes")
}

func TestDirectLogExporterFailsClosed(t *testing.T) {
	ls := newLogsServer(t, func(w http.ResponseWriter) {
		// As the collector refuses: a google.rpc.Status.
		b, err := proto.Marshal(&spb.Status{Code: 14, Message: "disk full"})
		if err != nil {
			panic(err)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write(b)
	})
	rec := newRecorder(t)
	s := rec.session(t, sandboxtrace.WithLogExporter(newDirect(t, ls.srv.URL+"/v1/logs")),
		sandboxtrace.WithDelivery(sandboxtrace.DeliverySyncFinish))
	ran := false
	_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"true"}},
		func(context.Context) (sandboxtrace.ExecResult, error) {
			ran = true
			return sandboxtrace.ExecResult{}, nil
		})
	require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
	assert.ErrorContains(t, err, "503")
	assert.ErrorContains(t, err, "disk full")
	assert.False(t, ran, "the operation must not run")
	require.NoError(t, s.Shutdown(context.Background()))
}

// A refusal whose body is not the collector's Status (a proxy's page, which
// may echo the request and its records, not yet redacted) is not quoted.
func TestDirectLogExporterKeepsAnEchoOutOfErrors(t *testing.T) {
	for _, contentType := range []string{"text/plain", "application/x-protobuf"} {
		ls := newLogsServer(t, nil)
		ls.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// It quotes the record it refuses, as error pages quote input.
			body, _ := io.ReadAll(r.Body)
			var req collogs.ExportLogsServiceRequest
			_ = proto.Unmarshal(body, &req)
			line := req.GetResourceLogs()[0].GetScopeLogs()[0].GetLogRecords()[0].GetBody().GetStringValue()
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"data":`+line[strings.Index(line, `"data":`)+7:])
		})
		rec := newRecorder(t)
		s := rec.session(t, sandboxtrace.WithLogExporter(newDirect(t, ls.srv.URL+"/v1/logs")),
			sandboxtrace.WithDelivery(sandboxtrace.DeliverySync))
		_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"curl", "-H", "token: s3cret"}},
			func(context.Context) (sandboxtrace.ExecResult, error) { return sandboxtrace.ExecResult{}, nil })
		require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
		assert.ErrorContains(t, err, "400 Bad Request")
		assert.NotContains(t, err.Error(), "s3cret", contentType)
		require.NoError(t, s.Shutdown(context.Background()))
	}
}

// A server that answers every request 200 with no body (a health check's
// handler, a placeholder proxy: an endpoint set to the wrong service) is
// not an OTLP endpoint: its 200 acknowledges nothing.
func TestDirectLogExporterNeedsAnOTLPReply(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	t.Cleanup(srv.Close)
	rec := newRecorder(t)
	s := rec.session(t, sandboxtrace.WithLogExporter(newDirect(t, srv.URL+"/v1/logs")),
		sandboxtrace.WithDelivery(sandboxtrace.DeliverySync))
	ran := false
	err := s.Read(context.Background(), "/w/a", nil, func(context.Context) error { ran = true; return nil })
	require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
	assert.ErrorContains(t, err, "not an OTLP reply")
	assert.False(t, ran, "the operation must not run")
	require.NoError(t, s.Shutdown(context.Background()))
}

// capture is a log processor that keeps the records it is given.
type capture struct{ got []sdklog.Record }

func (c *capture) OnEmit(_ context.Context, r *sdklog.Record) error {
	c.got = append(c.got, r.Clone())
	return nil
}
func (c *capture) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (c *capture) Shutdown(context.Context) error                         { return nil }
func (c *capture) ForceFlush(context.Context) error                       { return nil }

// oneRecord is a record as a LoggerProvider makes it (a zero Record keeps
// no attributes).
func oneRecord() []sdklog.Record {
	c := &capture{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(c))
	var r log.Record
	r.SetBody(attribute.StringValue("line"))
	r.SetSeverity(log.SeverityInfo)
	r.AddAttributes(attribute.Int64("n", 7), attribute.Bool("b", true), attribute.Float64("f", 1.5),
		attribute.StringSlice("ss", []string{"a", "b"}))
	lp.Logger("test").Emit(context.Background(), r)
	return c.got
}

func TestDirectLogExporterRejectedRecordsFail(t *testing.T) {
	ls := newLogsServer(t, func(w http.ResponseWriter) {
		b, err := proto.Marshal(&collogs.ExportLogsServiceResponse{PartialSuccess: &collogs.ExportLogsPartialSuccess{
			RejectedLogRecords: 1, ErrorMessage: "no room",
		}})
		if err != nil {
			panic(err)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(b)
	})
	exp := newDirect(t, ls.srv.URL+"/v1/logs")
	err := exp.Export(context.Background(), oneRecord())
	require.Error(t, err)
	assert.ErrorContains(t, err, "rejected 1 log records: no room")

	got := ls.records()
	require.Len(t, got, 1)
	attrs := map[string]any{}
	for _, kv := range got[0].GetAttributes() {
		v := kv.GetValue()
		switch {
		case v.GetArrayValue() != nil:
			var ss []string
			for _, e := range v.GetArrayValue().GetValues() {
				ss = append(ss, e.GetStringValue())
			}
			attrs[kv.GetKey()] = ss
		default:
			attrs[kv.GetKey()] = v.GetValue()
		}
	}
	assert.Equal(t, "line", got[0].GetBody().GetStringValue())
	assert.Equal(t, logspb.SeverityNumber_SEVERITY_NUMBER_INFO, got[0].GetSeverityNumber())
	assert.Len(t, attrs, 4)
	assert.Equal(t, []string{"a", "b"}, attrs["ss"])
}

// TestDirectLogExporterResendsOnAClosedConnection: a server that closes
// each connection after one reply, without saying so, makes the next
// export find a dead connection; it is sent again on a new one.
func TestDirectLogExporterResendsOnAClosedConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	var requests atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			req, err := http.ReadRequest(bufio.NewReader(c))
			if err == nil {
				_, _ = io.Copy(io.Discard, req.Body)
				requests.Add(1)
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n")
			}
			_ = c.Close()
		}
	}()
	exp := newDirect(t, "http://"+ln.Addr().String()+"/v1/logs")
	for i := range 3 {
		require.NoError(t, exp.Export(context.Background(), oneRecord()), "export %d", i)
	}
	assert.EqualValues(t, 3, requests.Load())
	require.NoError(t, exp.Shutdown(context.Background()))
	require.Error(t, exp.Export(context.Background(), oneRecord()), "after Shutdown")
}

// TestDirectLogExporterCancel: a server that never answers holds the
// export until its context ends.
func TestDirectLogExporterCancel(t *testing.T) {
	release, arrived := make(chan struct{}), make(chan struct{}, 1)
	ls := newLogsServer(t, func(http.ResponseWriter) { arrived <- struct{}{}; <-release })
	t.Cleanup(func() { close(release) })
	exp := newDirect(t, ls.srv.URL+"/v1/logs")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- exp.Export(ctx, oneRecord()) }()
	select {
	case <-arrived:
	case err := <-done:
		t.Fatalf("export returned before the server answered: %v", err)
	}
	cancel()
	err := <-done
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "got %v", err)
	assert.Len(t, ls.records(), 1)
}

func TestNewDirectLogExporterRefusesBadEndpoints(t *testing.T) {
	for _, u := range []string{"ftp://127.0.0.1/v1/logs", "http:///v1/logs", "127.0.0.1:4318", "http://[::1/v1/logs"} {
		_, err := sandboxtrace.NewDirectLogExporter(u)
		require.Error(t, err, u)
		assert.ErrorContains(t, err, "log endpoint", u)
	}
}

// An endpoint's credentials and query never appear in an error, and user
// info, which the exporter would not send, is refused.
func TestNewDirectLogExporterKeepsSecretsOutOfErrors(t *testing.T) {
	for _, u := range []string{
		"ftp://127.0.0.1/v1/logs?token=s3cret",
		"http://user:s3cret@127.0.0.1:4318/v1/logs",
		"http://user:s3cret@[::1/v1/logs?token=s3cret",
		"http:///v1/logs?token=s3cret",
	} {
		_, err := sandboxtrace.NewDirectLogExporter(u)
		require.Error(t, err, u)
		assert.ErrorContains(t, err, "log endpoint", u)
		assert.NotContains(t, err.Error(), "s3cret", u)
	}
}

// endedCtx is a context whose Err reports its end once ended is set, and
// whose Done never fires: it ends just as the reply is on its way.
type endedCtx struct {
	context.Context
	ended *atomic.Bool
}

func (c endedCtx) Err() error {
	if c.ended.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

// A reply of 200 that arrived is an acknowledgement, even when the
// export's context ended as it came.
func TestDirectLogExporterAcknowledgedAsItsContextEnds(t *testing.T) {
	var ended atomic.Bool
	ls := newLogsServer(t, func(w http.ResponseWriter) {
		ended.Store(true)
		w.Header().Set("Content-Type", "application/x-protobuf")
	})
	exp := newDirect(t, ls.srv.URL+"/v1/logs")
	require.NoError(t, exp.Export(endedCtx{context.Background(), &ended}, oneRecord()))
	assert.Len(t, ls.records(), 1)
}

// Shutdown ends an export in flight, as the Exporter contract allows and
// the processors count on when their Shutdown's ctx ends: behind a
// LogProcessor an export may otherwise wait out its 30 s bound.
func TestDirectLogExporterShutdownEndsAnExportInFlight(t *testing.T) {
	release, arrived := make(chan struct{}), make(chan struct{}, 1)
	ls := newLogsServer(t, func(w http.ResponseWriter) {
		arrived <- struct{}{}
		select { // bounded, so a failing run ends with an answer
		case <-release:
		case <-time.After(10 * time.Second):
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	})
	t.Cleanup(func() { close(release) })
	exp := newDirect(t, ls.srv.URL+"/v1/logs")
	done := make(chan error, 1)
	go func() { done <- exp.Export(context.Background(), oneRecord()) }()
	select {
	case <-arrived:
	case err := <-done:
		t.Fatalf("export returned before the server answered: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, exp.Shutdown(ctx))
	err := <-done
	require.Error(t, err, "the export in flight was answered, not ended by Shutdown")
	assert.ErrorContains(t, err, "shut down")
	assert.Error(t, exp.Export(context.Background(), oneRecord()), "an export after Shutdown")
}

// A partial success's message is quoted as a refusal's is: escaped and
// cut, so a long one (a backend quoting the records it rejects) does not
// carry them, or a terminal's control sequences, into the error.
func TestDirectLogExporterCutsAPartialSuccessMessage(t *testing.T) {
	msg := "\x1b[2J rejected: " + strings.Repeat("x", 10_000)
	ls := newLogsServer(t, func(w http.ResponseWriter) {
		b, err := proto.Marshal(&collogs.ExportLogsServiceResponse{PartialSuccess: &collogs.ExportLogsPartialSuccess{
			RejectedLogRecords: 1, ErrorMessage: msg,
		}})
		if err != nil {
			panic(err)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(b)
	})
	err := newDirect(t, ls.srv.URL+"/v1/logs").Export(context.Background(), oneRecord())
	require.Error(t, err)
	assert.ErrorContains(t, err, `rejected 1 log records: \x1b[2J rejected: xxx`)
	assert.Less(t, len(err.Error()), 300)
}

// The status line's reason phrase is the server's own text: a proxy's may
// be long or carry control sequences, so the error escapes and cuts it.
func TestDirectLogExporterEscapesTheReasonPhrase(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer func() { _ = c.Close() }()
		if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			_, _ = io.Copy(io.Discard, req.Body)
			_, _ = io.WriteString(c, "HTTP/1.1 502 \x1b[2J"+strings.Repeat("x", 10_000)+"\r\nContent-Length: 0\r\n\r\n")
		}
	}()
	err = newDirect(t, "http://"+ln.Addr().String()+"/v1/logs").Export(context.Background(), oneRecord())
	require.Error(t, err)
	assert.ErrorContains(t, err, `502 \x1b[2Jxxx`)
	assert.Less(t, len(err.Error()), 300)
}
