package sandboxauditreceiver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// benchIDPrefix starts every benchmark event id; the last 12 hex digits are
// a counter, so every event of every iteration is new to the dedupe window.
const benchIDPrefix = "b0000000-0000-4000-8000-"

// benchBody is a request body whose event ids are rewritten in place for
// each iteration.
type benchBody struct {
	buf     []byte
	offsets []int // where each id's 12-digit counter starts
	next    uint64
}

func newBenchBody(b *testing.B, lines []string) *benchBody {
	b.Helper()
	bb := &benchBody{}
	for _, l := range lines {
		i := strings.Index(l, `"event_id":"`)
		if i < 0 {
			b.Fatal("no event_id")
		}
		i += len(`"event_id":"`)
		l = l[:i] + benchIDPrefix + "000000000000" + l[i+36:]
		bb.offsets = append(bb.offsets, len(bb.buf)+i+len(benchIDPrefix))
		bb.buf = append(bb.buf, l...)
		bb.buf = append(bb.buf, '\n')
	}
	return bb
}

// renew gives every event a fresh id.
func (bb *benchBody) renew() []byte {
	var hex [16]byte
	for _, off := range bb.offsets {
		bb.next++
		s := strconv.AppendUint(hex[:0], bb.next, 16)
		n := copy(bb.buf[off+12-len(s):off+12], s)
		for i := off; i < off+12-n; i++ {
			bb.buf[i] = '0'
		}
	}
	return bb.buf
}

// nextSingle is request i of a start/finish alternation: one event, as
// HttpProxySink posts it (no trailing newline), with fresh ids.
func nextSingle(i int, start, finish *benchBody) []byte {
	bb := start
	if i%2 == 1 {
		bb = finish
	}
	return bytes.TrimSuffix(bb.renew(), []byte("\n"))
}

func benchPost(b *testing.B, client *http.Client, url, contentType string, body []byte) {
	if err := post1(client, url, contentType, body); err != nil {
		b.Fatal(err)
	}
}

// post1 posts body and wants a 200.
func post1(client *http.Client, url, contentType string, body []byte) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func benchPipelines() []struct {
	name   string
	logs   consumer.Logs
	traces consumer.Traces
} {
	return []struct {
		name   string
		logs   consumer.Logs
		traces consumer.Traces
	}{
		{"logs", consumertest.NewNop(), nil},
		{"logs+traces", consumertest.NewNop(), consumertest.NewNop()},
	}
}

// BenchmarkEventsSingle posts one event per request, as the Python
// HttpProxySink does, over loopback.
func BenchmarkEventsSingle(b *testing.B) {
	for _, p := range benchPipelines() {
		b.Run(p.name, func(b *testing.B) {
			tr := startReceiver(b, p.logs, p.traces)
			start := newBenchBody(b, []string{startJSON(1)})
			finish := newBenchBody(b, []string{finishJSON(1)})
			client := &http.Client{}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				benchPost(b, client, tr.eventsURL(), "application/json", nextSingle(i, start, finish))
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkEventsSingleParallel is BenchmarkEventsSingle with a client per
// goroutine (GOMAXPROCS of them), as several sandbox sessions posting at
// once: the cores are busy, so what the receiver costs per request shows.
// Each client has its own operation and event-id range.
func BenchmarkEventsSingleParallel(b *testing.B) {
	for _, p := range benchPipelines() {
		b.Run(p.name, func(b *testing.B) {
			tr := startReceiver(b, p.logs, p.traces)
			type pair struct{ start, finish *benchBody }
			pairs := make([]pair, runtime.GOMAXPROCS(0)) // one per RunParallel goroutine
			for g := range pairs {
				pairs[g] = pair{newBenchBody(b, []string{startJSON(g)}), newBenchBody(b, []string{finishJSON(g)})}
				pairs[g].start.next = uint64(g) << 40 // 12 hex digits: ranges never meet
				pairs[g].finish.next = pairs[g].start.next + 1<<39
			}
			var clients atomic.Int64
			client := &http.Client{}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				mine := pairs[clients.Add(1)-1]
				for i := 0; pb.Next(); i++ {
					if err := post1(client, tr.eventsURL(), "application/json", nextSingle(i, mine.start, mine.finish)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkEventsNDJSON posts batches of 1,000 events (500 operations,
// start and finish) over loopback.
func BenchmarkEventsNDJSON(b *testing.B) {
	const ops = 500
	for _, p := range benchPipelines() {
		b.Run(p.name, func(b *testing.B) {
			tr := startReceiver(b, p.logs, p.traces)
			lines := make([]string, 0, 2*ops)
			for n := range ops {
				lines = append(lines, startJSON(n), finishJSON(n))
			}
			bb := newBenchBody(b, lines)
			client := &http.Client{}
			b.SetBytes(int64(len(bb.buf)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				benchPost(b, client, tr.eventsURL(), "application/x-ndjson", bb.renew())
			}
			b.ReportMetric(float64(b.N*2*ops)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// discardWriter is a ResponseWriter that keeps only the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(status int)      { d.status = status }

// BenchmarkServeEventsSingle posts one event per request, as
// BenchmarkEventsSingle does, but straight into the server's handler chain
// (confighttp's middleware included) without a connection: the receiver's
// own cost per request, which loopback syscalls and scheduling bury.
func BenchmarkServeEventsSingle(b *testing.B) {
	for _, p := range benchPipelines() {
		b.Run(p.name, func(b *testing.B) {
			tr := startReceiver(b, p.logs, p.traces)
			h := tr.r.server.Handler
			start := newBenchBody(b, []string{startJSON(1)})
			finish := newBenchBody(b, []string{finishJSON(1)})
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				body := nextSingle(i, start, finish)
				req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, tr.r.cfg.EventsPath, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				clear(w.h)
				h.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
