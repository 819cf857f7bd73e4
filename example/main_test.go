package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// otlpServer is a minimal OTLP/HTTP traces and logs endpoint on loopback
// that keeps what it receives.
type otlpServer struct {
	*httptest.Server
	mu     sync.Mutex
	paths  []string
	traces []ptrace.Traces
	logs   []plog.Logs
}

func newOTLPServer(t *testing.T, status int) *otlpServer {
	t.Helper()
	s := &otlpServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var resp []byte
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		if strings.HasSuffix(r.URL.Path, "/v1/logs") {
			req := plogotlp.NewExportRequest()
			err = req.UnmarshalProto(body)
			s.logs = append(s.logs, req.Logs())
			if err == nil {
				resp, err = plogotlp.NewExportResponse().MarshalProto()
			}
		} else {
			req := ptraceotlp.NewExportRequest()
			err = req.UnmarshalProto(body)
			s.traces = append(s.traces, req.Traces())
			if err == nil {
				resp, err = ptraceotlp.NewExportResponse().MarshalProto()
			}
		}
		s.mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if status != http.StatusOK {
			http.Error(w, "refused by test", status)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	}))
	t.Cleanup(s.Close)
	return s
}

// startRecords returns the received write-ahead records' bodies.
func (s *otlpServer) startRecords() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, ld := range s.logs {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sl := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sl.Len(); j++ {
				lr := sl.At(j).LogRecords()
				for k := 0; k < lr.Len(); k++ {
					if lr.At(k).EventName() == "sandbox.session.start" {
						out = append(out, lr.At(k).Body().Str())
					}
				}
			}
		}
	}
	return out
}

// spans returns the received spans by name.
func (s *otlpServer) spans() map[string]ptrace.Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]ptrace.Span{}
	for _, td := range s.traces {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					sp := ss.Spans().At(k)
					out[sp.Name()] = sp
				}
			}
		}
	}
	return out
}

func noEnv(string) string { return "" }

func testConfig(t *testing.T, args ...string) config {
	t.Helper()
	cfg, err := parseFlags(append([]string{"-timeout", "3s"}, args...), io.Discard)
	require.NoError(t, err)
	return cfg
}

func str(t *testing.T, sp ptrace.Span, key string) string {
	t.Helper()
	v, ok := sp.Attributes().Get(key)
	require.True(t, ok, "%s has no %s", sp.Name(), key)
	return v.AsString()
}

func TestRunExportsTheSession(t *testing.T) {
	srv := newOTLPServer(t, http.StatusOK)
	id := "0B9D8C7E6F5A4B3C8D2E1F0A9B8C7D6E" // hyphen-less upper case on purpose
	cfg := testConfig(t, "-endpoint", strings.TrimPrefix(srv.URL, "http://"), "-session", id, "-capture-output")

	var out bytes.Buffer
	require.NoError(t, run(context.Background(), cfg, noEnv, &out))

	spans := srv.spans()
	for _, name := range []string{"sandbox.session", "sandbox.start", "sandbox.exec", "sandbox.write", "sandbox.read", "sandbox.stop"} {
		require.Contains(t, spans, name)
	}
	assert.ElementsMatch(t, []string{"/v1/logs", "/v1/traces"}, uniq(srv.paths))
	assert.Len(t, srv.startRecords(), 6, "one write-ahead record per operation")

	root := spans["sandbox.session"]
	traceID := root.TraceID()
	for name, sp := range spans {
		assert.Equal(t, traceID, sp.TraceID(), name)
		assert.Equal(t, "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e", str(t, sp, "sandbox.session.id"), name)
	}
	assert.Equal(t, "session_id=0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e\ntrace_id="+traceHex(traceID)+"\nexported 7 spans\n", out.String())

	write := spans["sandbox.write"]
	assert.Equal(t, `{"bytes":12,"path":"/workspace/notes.txt","user":"agent"}`, str(t, write, "sandbox.start_data"))
	// The last exec (the failing one) is the one kept by name: ok=false,
	// no error fields, exit code kept.
	exec := spans["sandbox.exec"]
	_, hasCode := exec.Attributes().Get("sandbox.error.code")
	assert.False(t, hasCode)
	assert.Equal(t, "false", str(t, exec, "sandbox.ok"))
	assert.Equal(t, "2", str(t, exec, "process.exit.code"))
	assert.Equal(t, ptrace.StatusCodeError, exec.Status().Code())
	stderr, err := base64.StdEncoding.DecodeString(str(t, exec, "sandbox.exec.stderr_bytes"))
	require.NoError(t, err)
	assert.Equal(t, "ls: cannot access '/nope': No such file or directory\n", string(stderr))
}

func TestRunWithURLAndEnvEndpoints(t *testing.T) {
	srv := newOTLPServer(t, http.StatusOK)
	require.NoError(t, run(context.Background(), testConfig(t, "-endpoint", srv.URL), noEnv, io.Discard))
	require.Len(t, srv.spans(), 6) // two execs share a name

	env := newOTLPServer(t, http.StatusOK)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", env.URL)
	require.NoError(t, run(context.Background(), testConfig(t), func(k string) string {
		if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			return env.URL
		}
		return ""
	}, io.Discard))
	require.Len(t, env.spans(), 6)
	assert.ElementsMatch(t, []string{"/v1/logs", "/v1/traces"}, uniq(env.paths))
}

func TestRunFailsWhenExportIsRefused(t *testing.T) {
	// 400 is permanent: no retries, so the failure is immediate.
	srv := newOTLPServer(t, http.StatusBadRequest)
	var out bytes.Buffer
	err := run(context.Background(), testConfig(t, "-endpoint", strings.TrimPrefix(srv.URL, "http://")), noEnv, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "export")
	assert.NotContains(t, out.String(), "exported", "no success line after a failed export")
	assert.Contains(t, out.String(), "session_id=", "ids are still printed for the record")
}

// A span request cut before any reply (a collector killed as it reads)
// costs nothing: NewSpanProcessor sends it again, and the run succeeds.
func TestRunSurvivesACutSpanRequest(t *testing.T) {
	srv := newOTLPServer(t, http.StatusOK)
	var cut atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/v1/traces") && cut.CompareAndSwap(false, true) {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		}
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), testConfig(t, "-endpoint", strings.TrimPrefix(front.URL, "http://")), noEnv, &out))
	assert.True(t, cut.Load(), "a span request was cut")
	assert.Len(t, srv.spans(), 6) // two execs share a name
	assert.Contains(t, out.String(), "exported 7 spans\n")
}

func TestExplicitInsecureFalseOverridesLoopbackDefault(t *testing.T) {
	// TLS against a plain HTTP server fails: the flag was honoured.
	srv := newOTLPServer(t, http.StatusOK)
	err := run(context.Background(), testConfig(t, "-endpoint", strings.TrimPrefix(srv.URL, "http://"), "-insecure=false"), noEnv, io.Discard)
	require.Error(t, err)
	assert.Empty(t, srv.spans())
}

func TestRunFailsWithNoCollector(t *testing.T) {
	// A port nobody listens on: take one, then close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	start := time.Now()
	err = run(context.Background(), testConfig(t, "-endpoint", addr, "-timeout", "1s"), noEnv, io.Discard)
	require.Error(t, err)
	assert.Less(t, time.Since(start), 30*time.Second, "the -timeout bounds the retries")
}

func TestSimulateRecordsTheFakeSession(t *testing.T) {
	for _, capture := range []bool{false, true} {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		cfg := config{captureOutput: capture, timeout: time.Second}
		var out bytes.Buffer
		require.NoError(t, simulate(context.Background(), tp, cfg, nil, &out))
		assert.Regexp(t, `^session_id=[0-9a-f-]{36}\ntrace_id=[0-9a-f]{32}\n$`, out.String())
		// The syncer has exported every ended span (the in-memory exporter
		// forgets them on Shutdown, so read first).

		type rec struct {
			name          string
			start, finish int64
			ok            bool
			stdout        string
			hasStdout     bool
		}
		var got []rec
		for _, sp := range exp.GetSpans() {
			if sp.Name == "sandbox.session" {
				continue
			}
			r := rec{name: sp.Name}
			for _, kv := range sp.Attributes {
				switch kv.Key {
				case "sandbox.event.start_seq":
					r.start = kv.Value.AsInt64()
				case "sandbox.event.finish_seq":
					r.finish = kv.Value.AsInt64()
				case "sandbox.ok":
					r.ok = kv.Value.AsBool()
				case "sandbox.exec.stdout_bytes":
					r.hasStdout = true
					r.stdout = kv.Value.AsString()
				}
			}
			got = append(got, r)
		}
		hello := "aGVsbG8K" // base64("hello\n")
		want := []rec{
			{"sandbox.start", 1, 2, true, "", false},
			{"sandbox.exec", 3, 4, true, hello, capture},
			{"sandbox.write", 5, 6, true, "", false},
			{"sandbox.read", 7, 8, true, "", false},
			{"sandbox.exec", 9, 10, false, "", capture},
			{"sandbox.stop", 11, 12, true, "", false},
		}
		if !capture {
			want[1].stdout = ""
		}
		assert.Equal(t, want, got, "capture=%v", capture)
		require.NoError(t, tp.Shutdown(context.Background()))
	}
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "", cfg.endpoint)
	assert.Nil(t, cfg.insecure)
	assert.Equal(t, uuid.Nil, cfg.sessionID)
	assert.False(t, cfg.captureOutput)

	cfg, err = parseFlags([]string{"-session", "urn:uuid:6F1C2A8E-3B4D-4E5F-9A0B-1C2D3E4F5A6B", "-insecure=false"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b", cfg.sessionID.String())
	require.NotNil(t, cfg.insecure)
	assert.False(t, *cfg.insecure)

	cfg, err = parseFlags([]string{"-insecure"}, io.Discard)
	require.NoError(t, err)
	require.NotNil(t, cfg.insecure)
	assert.True(t, *cfg.insecure)

	cfg, err = parseFlags([]string{"-delivery", "sync", "-exec-sleep", "2s", "-exit-code", "3"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "sync", cfg.delivery.String())
	assert.Equal(t, 2*time.Second, cfg.execSleep)
	assert.Equal(t, 3, cfg.exitCode)

	for _, args := range [][]string{{"-insecure=maybe"}, {"-session", "nope"}, {"-session", "00000000-0000-0000-0000-000000000000"}, {"-timeout", "0s"}, {"extra"}, {"-bogus"},
		{"-delivery", "eventually"}, {"-exec-sleep", "-1s"}, {"-sync-timeout", "0s"}} {
		_, err := parseFlags(args, io.Discard)
		assert.Error(t, err, "%q", args)
	}
}

func TestExporterOptionsRejectsBadEndpoints(t *testing.T) {
	no, yes := false, true
	for _, c := range []config{
		{endpoint: "localhost"},          // no port
		{endpoint: "ftp://collector:21"}, // not http
		{endpoint: "http://"},            // no host
		{endpoint: "https://c:4318", insecure: &yes},
		{endpoint: "http://c:4318", insecure: &no},
	} {
		_, err := exporterOptions(c, noEnv)
		assert.Error(t, err, "%+v", c)
	}
	for _, host := range []string{"localhost", "127.0.0.1", "::1", "LOCALHOST"} {
		assert.True(t, isLoopback(host), host)
	}
	for _, host := range []string{"collector", "10.0.0.1", "example.com"} {
		assert.False(t, isLoopback(host), host)
	}
}

func uniq(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func traceHex(id pcommon.TraceID) string { return id.String() }

func TestExitCodeAndExecSleep(t *testing.T) {
	srv := newOTLPServer(t, http.StatusOK)
	var out bytes.Buffer
	cfg := testConfig(t, "-endpoint", srv.URL, "-exit-code", "3", "-exec-sleep", "10ms")
	require.NoError(t, run(context.Background(), cfg, noEnv, &out))
	lines := strings.Split(out.String(), "\n")
	require.GreaterOrEqual(t, len(lines), 3)
	assert.True(t, strings.HasPrefix(lines[0], "session_id="), "session id first")
	assert.Equal(t, "exec running", lines[2])

	var first ptrace.Span
	for _, td := range srv.traces {
		sp := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := 0; i < sp.Len(); i++ {
			if v, ok := sp.At(i).Attributes().Get("sandbox.event.start_seq"); ok && v.Int() == 3 {
				first = sp.At(i)
			}
		}
	}
	assert.Equal(t, "false", str(t, first, "sandbox.ok"))
	assert.Equal(t, "3", str(t, first, "process.exit.code"))
	assert.Contains(t, str(t, first, "sandbox.finish_data"), `"exit_code":3`)
}

func TestSyncDeliveryWithoutCollectorRunsNothing(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	var out bytes.Buffer
	cfg := testConfig(t, "-endpoint", addr, "-delivery", "sync", "-sync-timeout", "300ms", "-exec-sleep", "1ms", "-timeout", "1s")
	err = run(context.Background(), cfg, noEnv, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "start event not acknowledged")
	assert.NotContains(t, out.String(), "exec running")
	assert.Contains(t, out.String(), "session_id=")
}
