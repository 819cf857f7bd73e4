package sandboxauditreceiver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
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

func benchPost(b *testing.B, client *http.Client, url, contentType string, body []byte) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d", resp.StatusCode)
	}
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
				bb := start
				if i%2 == 1 {
					bb = finish
				}
				body := bb.renew()
				benchPost(b, client, tr.eventsURL(), "application/json", bytes.TrimSuffix(body, []byte("\n")))
			}
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
