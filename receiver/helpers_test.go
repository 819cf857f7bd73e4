package sandboxauditreceiver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sandboxaudit/sandboxaudit/internal/sharedcomponent"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// freeEndpoint returns a loopback address with a port that was free a moment
// ago: the receiver must listen on a configured endpoint, so the test cannot
// pass port 0 and learn the port afterwards.
func freeEndpoint(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// validateOnPortZero validates cfg as a user's, with a port of its own in
// place of port 0: validate refuses port 0, which here lets the kernel
// pick a port the test then learns, with no race for it.
func validateOnPortZero(t testing.TB, cfg *Config) {
	t.Helper()
	checked := *cfg
	if host, port, err := net.SplitHostPort(cfg.ServerConfig.NetAddr.Endpoint); err == nil && port == "0" {
		checked.ServerConfig.NetAddr.Endpoint = net.JoinHostPort(host, "8088")
	}
	require.NoError(t, confmap.Validate(&checked))
}

// testReceiver is a started receiver in a logs and/or traces pipeline.
type testReceiver struct {
	r   *sandboxReceiver
	url string // http://host:port
}

func (tr *testReceiver) eventsURL() string { return tr.url + tr.r.cfg.EventsPath }
func (tr *testReceiver) tracesURL() string { return tr.url + tr.r.cfg.TracesPath }

// startReceiver creates the receiver through its factory, in the pipelines
// whose consumer is not nil, starts it on a loopback port the kernel picks,
// and shuts it down when the test ends.
func startReceiver(t testing.TB, logs consumer.Logs, traces consumer.Traces, opts ...func(*Config)) *testReceiver {
	t.Helper()
	return startReceiverWith(t, receivertest.NewNopSettings(metadata.Type), logs, traces, opts...)
}

func startReceiverWith(t testing.TB, set receiver.Settings, logs consumer.Logs, traces consumer.Traces, opts ...func(*Config)) *testReceiver {
	t.Helper()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.ServerConfig.NetAddr.Endpoint = "127.0.0.1:0"
	for _, o := range opts {
		o(cfg)
	}
	validateOnPortZero(t, cfg)
	ctx := context.Background()
	var comps []component.Component
	if logs != nil {
		c, err := f.CreateLogs(ctx, set, cfg, logs)
		require.NoError(t, err)
		comps = append(comps, c)
	}
	if traces != nil {
		c, err := f.CreateTraces(ctx, set, cfg, traces)
		require.NoError(t, err)
		comps = append(comps, c)
	}
	require.NotEmpty(t, comps)
	for _, c := range comps {
		require.NoError(t, c.Start(ctx, componenttest.NewNopHost()))
	}
	t.Cleanup(func() {
		for _, c := range comps {
			assert.NoError(t, c.Shutdown(context.Background()))
		}
	})
	r := unwrap(comps[0])
	return &testReceiver{r: r, url: "http://" + r.addr.String()}
}

// post sends body with the content type and returns status, headers and body.
func post(t testing.TB, url, contentType string, body []byte) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return do(t, req)
}

func do(t testing.TB, req *http.Request) (int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

var testSession = uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")

// startJSON and finishJSON are events as the Python HttpProxySink posts them
// (pydantic model_dump_json: model field order, no spaces), for operation
// number n of the test session.
func startJSON(n int) string  { return sessionStartJSON(testSession, n) }
func finishJSON(n int) string { return sessionFinishJSON(testSession, n) }

// sessionEventID is the deterministic event id of operation n's phase.
func sessionEventID(session uuid.UUID, n int, phase string) uuid.UUID {
	return uuid.NewSHA1(session, []byte(strconv.Itoa(n)+"/"+phase))
}

func sessionStartJSON(session uuid.UUID, n int) string {
	return fmt.Sprintf(`{"version":1,"event_id":"%s","ts":"2026-03-14T15:09:26.535897Z","session_id":"%s","seq":%d,"op":"exec","phase":"start","span_id":"sandbox_op_%d","parent_span_id":null,"trace_id":null,"data":{"command":["sh","-lc","ls"],"timeout_s":30.0}}`,
		sessionEventID(session, n, "start"), session, 2*n+1, n)
}

func sessionFinishJSON(session uuid.UUID, n int) string {
	return fmt.Sprintf(`{"version":1,"event_id":"%s","ts":"2026-03-14T15:09:26.786022Z","session_id":"%s","seq":%d,"op":"exec","phase":"finish","span_id":"sandbox_op_%d","parent_span_id":null,"trace_id":null,"data":{"exit_code":0},"ok":true,"duration_ms":250.125,"error_code":null,"error_type":null,"error_message":null,"error_retryable":null,"stdout":null,"stderr":null}`,
		sessionEventID(session, n, "finish"), session, 2*n+2, n)
}

// logBodies returns the bodies of every log record the sink holds, in order.
func logBodies(sink *consumertest.LogsSink) []string {
	var out []string
	for _, ld := range sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					out = append(out, lrs.At(k).Body().Str())
				}
			}
		}
	}
	return out
}

// switchableLogs is a logs consumer whose error the test sets.
type switchableLogs struct {
	consumertest.LogsSink
	mu  sync.Mutex
	err error
}

func (s *switchableLogs) setErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

func (s *switchableLogs) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.LogsSink.ConsumeLogs(ctx, ld)
}

// unwrap returns the receiver behind the component a factory returned.
func unwrap(c component.Component) *sandboxReceiver {
	return c.(*sharedcomponent.Handle[*Config, *sandboxReceiver]).Unwrap()
}

// recordingSettings are receiver settings whose telemetry tests can read.
func recordingSettings(t *testing.T) (receiver.Settings, *componenttest.Telemetry) {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	return set, tel
}

// givenUp is pairs_timed_out by reason.
func givenUp(t *testing.T, tel *componenttest.Telemetry) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	for key, n := range counterValues(t, tel, "otelcol_sandboxaudit_receiver_pairs_timed_out") {
		got[strings.TrimPrefix(key, "reason=")] += n
	}
	return got
}
