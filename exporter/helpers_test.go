package sandboxauditexporter

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/httpsink"
)

// Test identities, written out rather than derived from the code under test.
const (
	sessionA = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	sessionB = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	traceHex = "4bf92f3577b34da6a3ce929d0e0e4736"
)

// eventIDNamespace is the namespace of derived event ids (docs/format.md).
var eventIDNamespace = uuid.MustParse("d5522618-d9a4-5682-af63-f0e537900855")

// spanSpec is one span to build; zero values leave an attribute out.
type spanSpec struct {
	name          string
	spanID        string // 16 hex digits
	parentID      string
	start, end    time.Time
	attrs         map[string]any // string, int, float64, bool, []byte
	statusError   bool
	statusMessage string
}

func mustHex(t testing.TB, s string, n int) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	require.Len(t, b, n)
	return b
}

func traceIDOf(t testing.TB, s string) pcommon.TraceID {
	return pcommon.TraceID(mustHex(t, s, 16))
}

func spanIDOf(t testing.TB, s string) pcommon.SpanID {
	return pcommon.SpanID(mustHex(t, s, 8))
}

// buildTraces puts the spans into one resource and scope.
func buildTraces(t testing.TB, specs ...spanSpec) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for _, sp := range specs {
		s := spans.AppendEmpty()
		s.SetName(sp.name)
		s.SetKind(ptrace.SpanKindInternal)
		s.SetTraceID(traceIDOf(t, traceHex))
		s.SetSpanID(spanIDOf(t, sp.spanID))
		if sp.parentID != "" {
			s.SetParentSpanID(spanIDOf(t, sp.parentID))
		}
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(sp.start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(sp.end))
		if sp.statusError {
			s.Status().SetCode(ptrace.StatusCodeError)
			s.Status().SetMessage(sp.statusMessage)
		}
		for k, v := range sp.attrs {
			switch v := v.(type) {
			case string:
				s.Attributes().PutStr(k, v)
			case int:
				s.Attributes().PutInt(k, int64(v))
			case float64:
				s.Attributes().PutDouble(k, v)
			case bool:
				s.Attributes().PutBool(k, v)
			case []byte:
				s.Attributes().PutEmptyBytes(k).FromRaw(v)
			default:
				t.Fatalf("unsupported attribute type %T", v)
			}
		}
	}
	return td
}

// canonical decodes hand-written event JSON and returns its canonical line,
// through the auditevent core only.
func canonical(t testing.TB, eventJSON string) string {
	t.Helper()
	ev, err := auditevent.Decode([]byte(eventJSON))
	require.NoError(t, err, eventJSON)
	return string(auditevent.Line(&ev))
}

func derivedID(spanHex, phase string) string {
	return uuid.NewSHA1(eventIDNamespace, []byte(traceHex+"/"+spanHex+"/"+phase)).String()
}

// syncConfig is the default config (queue off, so Consume* returns after
// the sinks are written) with short HTTP retries.
func syncConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.RetryConfig = configretry.BackOffConfig{
		Enabled:         true,
		InitialInterval: 10 * time.Millisecond,
		Multiplier:      2,
		MaxInterval:     20 * time.Millisecond,
		MaxElapsedTime:  100 * time.Millisecond,
	}
	return cfg
}

func withFile(cfg *Config, path string, policy auditevent.PolicyOverride) {
	fc := cfg.File.GetOrInsertDefault()
	fc.Path = path
	fc.PayloadPolicy = policy
}

func withHTTP(cfg *Config, endpoint, format string, policy auditevent.PolicyOverride) *HTTPConfig {
	hc := cfg.HTTP.GetOrInsertDefault()
	hc.ClientConfig.Endpoint = endpoint
	hc.ClientConfig.Timeout = 5 * time.Second
	hc.Format = httpsink.Format(format)
	hc.PayloadPolicy = policy
	return hc
}

// testExporters is a started traces+logs pair sharing one config.
type testExporters struct {
	traces exporter.Traces
	logs   exporter.Logs
	tel    *componenttest.Telemetry
}

func startExporters(t testing.TB, cfg *Config) *testExporters {
	t.Helper()
	return startExportersWithLogger(t, cfg, zap.NewNop())
}

func startExportersWithLogger(t testing.TB, cfg *Config, logger *zap.Logger, opts ...componenttest.TelemetryOption) *testExporters {
	t.Helper()
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry(opts...)
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := exportertest.NewNopSettings(typ)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = logger

	f := NewFactory()
	ctx := context.Background()
	tr, err := f.CreateTraces(ctx, set, cfg)
	require.NoError(t, err)
	lg, err := f.CreateLogs(ctx, set, cfg)
	require.NoError(t, err)
	require.NoError(t, tr.Start(ctx, componenttest.NewNopHost()))
	require.NoError(t, lg.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() {
		require.NoError(t, tr.Shutdown(context.Background()))
		require.NoError(t, lg.Shutdown(context.Background()))
	})
	return &testExporters{traces: tr, logs: lg, tel: tel}
}

// counter returns the value of a counter metric's data point with the
// given attribute, 0 when there is none.
func (te *testExporters) counter(t testing.TB, name, attrKey, attrValue string) int64 {
	t.Helper()
	m, err := te.tel.GetMetric(name)
	if err != nil {
		return 0
	}
	return sumPoints(m, attrKey, attrValue)
}

func readLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	if len(b) == 0 {
		return nil
	}
	require.True(t, bytes.HasSuffix(b, []byte("\n")), "file must end in a newline")
	lines := strings.SplitAfter(string(b), "\n")
	return lines[:len(lines)-1]
}

// recorder is a loopback endpoint that records every request and answers
// with the status its func says.
type recorder struct {
	mu       sync.Mutex
	requests []recordedRequest
	status   func(n int) int // n: 0-based request number
	srv      *httptest.Server
}

type recordedRequest struct {
	contentType string
	header      http.Header
	body        string
	status      int // what the recorder answered
}

func newRecorder(t *testing.T, status func(n int) int) *recorder {
	t.Helper()
	r := &recorder{status: status}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		n := len(r.requests)
		code := http.StatusOK
		if r.status != nil {
			code = r.status(n)
		}
		r.requests = append(r.requests, recordedRequest{
			contentType: req.Header.Get("Content-Type"), header: req.Header.Clone(), body: string(body), status: code,
		})
		r.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) snapshot() []recordedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedRequest(nil), r.requests...)
}

// acceptedBodies concatenates the bodies of the requests answered 2xx, in
// arrival order: what the endpoint actually took.
func (r *recorder) acceptedBodies() string {
	var sb strings.Builder
	for _, req := range r.snapshot() {
		if req.status >= 200 && req.status <= 299 {
			sb.WriteString(req.body)
		}
	}
	return sb.String()
}

// sumPoints adds up an int64 sum or gauge's points that carry the attribute
// (all points when attrKey is empty).
func sumPoints(m metricdata.Metrics, attrKey, attrValue string) int64 {
	var dps []metricdata.DataPoint[int64]
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		dps = d.DataPoints
	case metricdata.Gauge[int64]:
		dps = d.DataPoints
	}
	var total int64
	for _, dp := range dps {
		if attrKey != "" {
			v, ok := dp.Attributes.Value(attribute.Key(attrKey))
			if !ok || v.AsString() != attrValue {
				continue
			}
		}
		total += dp.Value
	}
	return total
}

func exportertestSettings() exporter.Settings { return exportertest.NewNopSettings(typ) }

func nopHost() component.Host { return componenttest.NewNopHost() }
