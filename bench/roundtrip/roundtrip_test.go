package roundtrip

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/bench/rawpost"
	sandboxauditexporter "github.com/sandboxaudit/sandboxaudit/exporter"
	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/loopback"
	sandboxauditreceiver "github.com/sandboxaudit/sandboxaudit/receiver"
)

// target is one endpoint the benchmark posts to, and the client it
// posts with.
type target struct {
	name string
	post func(body []byte) error
	body func() []byte
	took []time.Duration
	cpu  time.Duration // this process's CPU time during the target's posts
}

// BenchmarkLoopbackPost posts once to each target per iteration, in turn,
// and reports each target's p50 and p99 in µs:
//   - bare, bare-raw: net/http serving a handler that reads the body and
//     answers 200, in this process, with net/http's client and with a raw
//     client (one kept-alive connection written and read on the caller's
//     goroutine, as sandboxtrace's DirectLogExporter does);
//   - bare-proc-raw: the same server in another process, the raw client:
//     the floor of one acknowledged round trip to a collector;
//   - events-never, events-batch: an HttpProxySink event to the sandboxaudit
//     receiver, into the sandboxaudit exporter's file (net/http client);
//   - logs-never-raw, logs-batch-raw: the same event as sandboxtrace's
//     log record to the OTLP receiver's /v1/logs, raw client;
//   - fdatasync: a 1 KB append and fdatasync on the same disk.
//
// "-cpu-µs" is this process's CPU time per request (rusage, coarse: read
// it over many iterations); for bare-proc-raw it is the client's alone.
func BenchmarkLoopbackPost(b *testing.B) {
	dir := b.TempDir()
	ev := newEvents()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	viaHTTP := func(url, contentType string) func([]byte) error {
		return func(body []byte) error { return post(client, url, contentType, body) }
	}
	viaRaw := func(url, contentType string) func([]byte) error {
		c, err := rawpost.Dial(url, contentType)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		return c.Post
	}
	bareServer, err := rawpost.StartBare()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = bareServer.Close() }()
	bare := bareServer.URL
	bareProc, err := rawpost.StartProcess()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = bareProc.Close() }()
	targets := []*target{
		{name: "bare", post: viaHTTP(bare, "application/json"), body: ev.json},
		{name: "bare-raw", post: viaRaw(bare, "application/json"), body: ev.json},
		{name: "bare-proc-raw", post: viaRaw(bareProc.URL, "application/json"), body: ev.json},
	}
	for _, fsync := range []string{"never", "batch"} {
		exp := startExporter(b, filepath.Join(dir, fsync+".jsonl"), fsync)
		targets = append(targets,
			&target{name: "events-" + fsync, post: viaHTTP(startEventsReceiver(b, exp), "application/json"), body: ev.json},
			&target{name: "logs-" + fsync + "-raw", post: viaRaw(startOTLPReceiver(b, exp), "application/x-protobuf"), body: ev.otlp},
		)
	}
	targets = append(targets, syncProbe(b, filepath.Join(dir, "probe")))
	targets = only(b, targets)
	for _, t := range targets { // warm-up: the connections
		if err := t.post(t.body()); err != nil {
			b.Fatalf("%s: %v", t.name, err)
		}
	}
	for b.Loop() {
		for _, t := range targets {
			body := t.body()
			cpu0 := processCPU(b)
			t0 := time.Now()
			if err := t.post(body); err != nil {
				b.Fatalf("%s: %v", t.name, err)
			}
			t.took = append(t.took, time.Since(t0))
			t.cpu += processCPU(b) - cpu0
		}
	}
	for _, t := range targets {
		slices.Sort(t.took)
		b.ReportMetric(us(t.took[len(t.took)/2]), t.name+"-p50-µs")
		b.ReportMetric(us(t.took[len(t.took)*99/100]), t.name+"-p99-µs")
		b.ReportMetric(us(t.cpu)/float64(len(t.took)), t.name+"-cpu-µs")
	}
}

// onlyEnv, a regular expression, keeps the targets whose name it matches
// (for a profile of one path).
const onlyEnv = "ROUNDTRIP_ONLY"

func only(b *testing.B, targets []*target) []*target {
	expr := os.Getenv(onlyEnv)
	if expr == "" {
		return targets
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		b.Fatalf("%s: %v", onlyEnv, err)
	}
	return slices.DeleteFunc(targets, func(t *target) bool { return !re.MatchString(t.name) })
}

// syncProbe appends 1 KB to a file and fdatasyncs it, as the exporter does
// for one event's line.
func syncProbe(b *testing.B, path string) *target {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	line := append(bytes.Repeat([]byte{'x'}, 1023), '\n')
	return &target{name: "fdatasync", body: func() []byte { return line }, post: func(body []byte) error {
		if _, err := f.Write(body); err != nil {
			return err
		}
		return syscall.Fdatasync(int(f.Fd()))
	}}
}

// processCPU is the user and system CPU time of this process (both ends
// of the in-process targets).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func post(client *http.Client, url, contentType string, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	return rawpost.ReadAnswer(resp, url)
}

// startExporter starts the sandboxaudit exporter writing path.
func startExporter(b *testing.B, path, fsync string) exporter.Logs {
	f := sandboxauditexporter.NewFactory()
	cfg := f.CreateDefaultConfig()
	raw := map[string]any{"file": map[string]any{"path": path, "fsync": fsync}}
	if err := confmap.NewFromStringMap(raw).Unmarshal(cfg); err != nil {
		b.Fatal(err)
	}
	exp, err := f.CreateLogs(context.Background(), exportertest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		b.Fatal(err)
	}
	start(b, exp)
	return exp
}

func start(b *testing.B, c component.Component) {
	if err := c.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Shutdown(context.Background()) })
}

// startEventsReceiver starts the sandboxaudit receiver into next and
// returns its events URL.
func startEventsReceiver(b *testing.B, next consumer.Logs) string {
	addr := freeAddr(b)
	f := sandboxauditreceiver.NewFactory()
	cfg := f.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(map[string]any{"endpoint": addr}).Unmarshal(cfg); err != nil {
		b.Fatal(err)
	}
	r, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, next)
	if err != nil {
		b.Fatal(err)
	}
	start(b, r)
	return "http://" + addr + "/v1/sandbox/events"
}

// startOTLPReceiver starts the OTLP receiver, HTTP only, into next and
// returns its logs URL.
func startOTLPReceiver(b *testing.B, next consumer.Logs) string {
	addr := freeAddr(b)
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig()
	raw := map[string]any{"protocols": map[string]any{"http": map[string]any{"endpoint": addr}}}
	if err := confmap.NewFromStringMap(raw).Unmarshal(cfg); err != nil {
		b.Fatal(err)
	}
	var r receiver.Logs
	r, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, next)
	if err != nil {
		b.Fatal(err)
	}
	start(b, r)
	return "http://" + addr + "/v1/logs"
}

func freeAddr(b *testing.B) string {
	a, err := loopback.FreeAddrs(1)
	if err != nil {
		b.Fatal(err)
	}
	return a[0]
}

// events makes one session's events, a start then its finish, with fresh
// ids, as HttpProxySink posts them (JSON) or as sandboxtrace exports them
// (an OTLP logs request of one record).
type events struct {
	session string
	seq     int
}

func newEvents() *events { return &events{session: uuid.NewString()} }

func (e *events) json() []byte {
	e.seq++
	phase, tail := "start", ""
	if e.seq%2 == 0 {
		phase, tail = "finish", `,"ok":true,"duration_ms":0.125`
	}
	return fmt.Appendf(nil, `{"version":1,"event_id":%q,"ts":"2026-03-14T15:09:26.535897Z","session_id":%q,"seq":%d,"op":"exec","phase":%q,"span_id":"sandbox_op_%d","parent_span_id":null,"trace_id":null,"data":{"command":["true"],"timeout_s":30.0,"shell":false,"user":null}%s}`,
		uuid.NewString(), e.session, e.seq, phase, (e.seq+1)/2, tail)
}

func (e *events) otlp() []byte {
	ev, err := auditevent.Decode(e.json())
	if err != nil {
		panic(err)
	}
	body, err := plogotlp.NewExportRequestFromLogs(logmap.EventsToLogs([]auditevent.Event{ev}, "bench")).MarshalProto()
	if err != nil {
		panic(err)
	}
	return body
}
