package roundtrip

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
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
	sandboxauditexporter "github.com/sandboxaudit/sandboxaudit/exporter"
	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/loopback"
	sandboxauditreceiver "github.com/sandboxaudit/sandboxaudit/receiver"
)

// target is one endpoint the benchmark posts to.
type target struct {
	name, url, contentType string
	body                   func(i int) []byte
	took                   []time.Duration
}

// BenchmarkLoopbackPost posts once to each target per iteration and
// reports each target's p50 and p99 in µs. "bare" is net/http on both
// sides with a handler that reads the body and answers 200: the floor of
// a kept-alive HTTP round trip here.
func BenchmarkLoopbackPost(b *testing.B) {
	dir := b.TempDir()
	ev := newEvents()
	targets := []*target{{name: "bare", url: startBare(b), contentType: "application/json", body: ev.json}}
	for _, fsync := range []string{"never", "batch"} {
		exp := startExporter(b, filepath.Join(dir, fsync+".jsonl"), fsync)
		targets = append(targets,
			&target{name: "events-" + fsync, url: startEventsReceiver(b, exp), contentType: "application/json", body: ev.json},
			&target{name: "logs-" + fsync, url: startOTLPReceiver(b, exp), contentType: "application/x-protobuf", body: ev.otlp},
		)
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	for _, t := range targets { // warm-up: the connections
		if err := post(client, t.url, t.contentType, t.body(0)); err != nil {
			b.Fatalf("%s: %v", t.name, err)
		}
	}
	i := 0
	for b.Loop() {
		i++
		for _, t := range targets {
			body := t.body(i)
			t0 := time.Now()
			if err := post(client, t.url, t.contentType, body); err != nil {
				b.Fatalf("%s: %v", t.name, err)
			}
			t.took = append(t.took, time.Since(t0))
		}
	}
	for _, t := range targets {
		slices.Sort(t.took)
		b.ReportMetric(us(t.took[len(t.took)/2]), t.name+"-p50-µs")
		b.ReportMetric(us(t.took[len(t.took)*99/100]), t.name+"-p99-µs")
	}
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
	reply, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", url, resp.Status, reply)
	}
	return nil
}

// startBare serves a handler that reads the body and answers 200.
func startBare(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/"
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

func (e *events) json(i int) []byte {
	e.seq++
	phase, tail := "start", ""
	if e.seq%2 == 0 {
		phase, tail = "finish", `,"ok":true,"duration_ms":0.125`
	}
	return fmt.Appendf(nil, `{"version":1,"event_id":%q,"ts":"2026-03-14T15:09:26.535897Z","session_id":%q,"seq":%d,"op":"exec","phase":%q,"span_id":"sandbox_op_%d","parent_span_id":null,"trace_id":null,"data":{"command":["true"],"timeout_s":30.0,"shell":false,"user":null}%s}`,
		uuid.NewString(), e.session, e.seq, phase, (e.seq+1)/2, tail)
}

func (e *events) otlp(i int) []byte {
	ev, err := auditevent.Decode(e.json(i))
	if err != nil {
		panic(err)
	}
	body, err := plogotlp.NewExportRequestFromLogs(logmap.EventsToLogs([]auditevent.Event{ev}, "bench")).MarshalProto()
	if err != nil {
		panic(err)
	}
	return body
}
