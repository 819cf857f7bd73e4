package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sandboxaudit/sandboxaudit"
)

// delSpanBytes is the DEL bytes in each attack span's start_data: the
// canonical line writes each as \u007f, six times its size.
const (
	delSpanBytes    = 19 << 20
	delSpanRequests = 12
	// peakRSSBound is the goal (1 GiB) with half of it again as room for
	// a garbage collector that runs late; the figure is logged.
	peakRSSBound = 3 << 29
)

// delSpan is an OTLP protobuf request of one sandbox span whose
// start_data holds a string of 19 MiB of DEL bytes, numbered by i.
func delSpan(t *testing.T, i int) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("sandbox.write")
	sp.SetTraceID(pcommon.TraceID{0x4b, 0xf9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, byte(i + 1)})
	sp.SetSpanID(pcommon.SpanID{0, 0xf0, 0x67, 0xaa, 0, 0, 1, byte(i + 1)})
	start := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
	a := sp.Attributes()
	a.PutStr("sandbox.operation", "write")
	a.PutStr("sandbox.session.id", fmt.Sprintf("9e3c4b5a-0000-4000-8000-%012x", i))
	a.PutStr("sandbox.start_data", `{"path":"`+strings.Repeat("\x7f", delSpanBytes)+`"}`)
	a.PutStr("sandbox.finish_data", `{}`)
	a.PutBool("sandbox.ok", true)
	a.PutDouble("sandbox.duration_ms", 1)
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	return body
}

// answer is one request's status and the start of its body.
type answer struct {
	status int
	body   string
}

// postSpansConcurrently posts n DEL spans at once to url and returns the
// answers.
func postSpansConcurrently(t *testing.T, url string, n, offset int) []answer {
	t.Helper()
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = delSpan(t, offset+i)
	}
	answers := make([]answer, n)
	client := &http.Client{Timeout: 2 * time.Minute}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			answers[i] = answer{status: -1}
			req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(bodies[i]))
			if err != nil {
				answers[i].body = err.Error()
				return
			}
			req.Header.Set("Content-Type", "application/x-protobuf")
			resp, err := client.Do(req)
			if err != nil {
				answers[i].body = err.Error()
				return
			}
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			_ = resp.Body.Close()
			answers[i] = answer{status: resp.StatusCode, body: string(b)}
		})
	}
	wg.Wait()
	return answers
}

// requireAnsweredWell requires every answer to be a 2xx, a 503 (retry), or
// a 4xx whose body names the problem: the line's size limit.
func requireAnsweredWell(t *testing.T, what string, answers []answer) map[int]int {
	t.Helper()
	counts := map[int]int{}
	for _, a := range answers {
		counts[a.status]++
		switch {
		case a.status >= 200 && a.status < 300, a.status == http.StatusServiceUnavailable:
		case a.status >= 400 && a.status < 500:
			assert.Contains(t, a.body, "max_line_bytes", "%s: a %d must name the problem", what, a.status)
		default:
			t.Errorf("%s: answered %d: %.300q", what, a.status, a.body)
		}
	}
	return counts
}

// TestDELSpansStayUnderOneGiB: twelve concurrent OTLP/HTTP requests, each a
// span whose start_data is 19 MiB of DEL bytes (114 MiB once escaped in a
// line), into the default pipeline (otlp → memory_limiter → sandboxaudit),
// and then into the sandboxaudit receiver's own /v1/traces. Every request
// is answered 2xx, 503 or a 4xx naming the problem, and the collector's
// peak resident memory (VmHWM) stays within peakRSSBound (goal: 1 GiB).
func TestDELSpansStayUnderOneGiB(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addrs := freeAddrs(t, 4)
	grpcAddr, httpAddr, sandboxAddr, metricsAddr := addrs[0], addrs[1], addrs[2], addrs[3]
	col := startCollector(t, "default", dir, defaultConfigOn(t, grpcAddr, httpAddr, sandboxAddr, metricsAddr),
		grpcAddr, httpAddr, sandboxAddr, metricsAddr)
	idle := vmHWM(t, col.cmd.Process.Pid)

	otlp := requireAnsweredWell(t, "otlp", postSpansConcurrently(t, "http://"+httpAddr+"/v1/traces", delSpanRequests, 0))
	afterOTLP := vmHWM(t, col.cmd.Process.Pid)
	own := requireAnsweredWell(t, "sandboxaudit", postSpansConcurrently(t, "http://"+sandboxAddr+"/v1/traces", delSpanRequests, delSpanRequests))
	peak := vmHWM(t, col.cmd.Process.Pid)
	t.Logf("%d x %d MiB DEL spans: otlp statuses %v, peak RSS %d MiB; sandboxaudit /v1/traces statuses %v, peak RSS %d MiB (idle %d MiB)",
		delSpanRequests, delSpanBytes>>20, otlp, afterOTLP>>20, own, peak>>20, idle>>20)
	require.Less(t, peak, int64(peakRSSBound), "peak RSS")
	col.stop(t)
}

// defaultConfigOn is the embedded default configuration with its four
// loopback ports moved to the given addresses.
func defaultConfigOn(t *testing.T, grpcAddr, httpAddr, sandboxAddr, metricsAddr string) string {
	t.Helper()
	_, metricsPort, err := net.SplitHostPort(metricsAddr)
	require.NoError(t, err)
	cfg := sandboxaudit.DefaultConfig()
	for old, repl := range map[string]string{
		"endpoint: 127.0.0.1:4317": "endpoint: " + grpcAddr,
		"endpoint: 127.0.0.1:4318": "endpoint: " + httpAddr,
		"endpoint: 127.0.0.1:8088": "endpoint: " + sandboxAddr,
		"port: 8888":               "port: " + metricsPort,
	} {
		require.Equal(t, 1, strings.Count(cfg, old), "default config: %q", old)
		cfg = strings.Replace(cfg, old, repl, 1)
	}
	return cfg
}
