package sandboxauditreceiver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// canonical is the canonical line (without newline) of an event body, via
// the core encoder the exporter uses too.
func canonical(t *testing.T, body string) string {
	t.Helper()
	ev, err := auditevent.Decode([]byte(body))
	require.NoError(t, err)
	return string(auditevent.AppendJSON(nil, &ev))
}

func TestEventsSingleJSON(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil)

	status, hdr, body := post(t, tr.eventsURL(), "application/json", []byte(startJSON(1)))
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "application/json", hdr.Get("Content-Type"))
	assert.JSONEq(t, `{"accepted":1,"duplicates":0}`, body)
	require.Equal(t, []string{canonical(t, startJSON(1))}, logBodies(sink))

	// A charset parameter is fine, as some HTTP clients add one.
	status, _, body = post(t, tr.eventsURL(), "application/json; charset=utf-8", []byte(finishJSON(1)))
	require.Equal(t, http.StatusOK, status, body)
	// Media types are case-insensitive, bare ones included.
	status, _, body = post(t, tr.eventsURL(), "Application/JSON", []byte(startJSON(2)))
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, 3, sink.LogRecordCount())
}

func TestEventsNDJSON(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil)

	// Blank lines are skipped, CRLF line ends are fine, the last line has
	// no newline.
	batch := startJSON(1) + "\n\n" + finishJSON(1) + "\r\n   \n" + startJSON(2)
	status, _, body := post(t, tr.eventsURL(), "application/x-ndjson", []byte(batch))
	require.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `{"accepted":3,"duplicates":0}`, body)
	assert.Equal(t, []string{canonical(t, startJSON(1)), canonical(t, finishJSON(1)), canonical(t, startJSON(2))}, logBodies(sink))

	// An empty batch is a no-op, not an error.
	status, _, body = post(t, tr.eventsURL(), "application/x-ndjson", nil)
	require.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `{"accepted":0,"duplicates":0}`, body)
	assert.Equal(t, 3, sink.LogRecordCount())
}

func TestEventsBadLineRejectsWholeBatch(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil)

	bad := strings.Replace(startJSON(3), testSession.String(), "not-a-session", 1)
	batch := startJSON(1) + "\n" + finishJSON(1) + "\n" + bad + "\n" + startJSON(4) + "\n"
	status, hdr, body := post(t, tr.eventsURL(), "application/x-ndjson", []byte(batch))
	require.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "text/plain; charset=utf-8", hdr.Get("Content-Type"))
	assert.Equal(t, "line 3: session_id: not a UUID\n", body)
	assert.Zero(t, sink.LogRecordCount(), "nothing of a refused batch is delivered")

	// A blank line still counts as a line, as in an editor.
	status, _, body = post(t, tr.eventsURL(), "application/x-ndjson", []byte("\n"+startJSON(1)+"\n{\"phase\":\"start\"}\n"))
	require.Equal(t, http.StatusBadRequest, status)
	assert.True(t, strings.HasPrefix(body, "line 3: "), body)

	// A single event names the field without a line number.
	status, _, body = post(t, tr.eventsURL(), "application/json", []byte(bad))
	require.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "session_id: not a UUID\n", body)

	// Two events are not one event.
	status, _, _ = post(t, tr.eventsURL(), "application/json", []byte(startJSON(1)+"\n"+startJSON(2)))
	require.Equal(t, http.StatusBadRequest, status)
	assert.Zero(t, sink.LogRecordCount())
}

func TestEventsErrorBodyIsCapped(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil)
	secret := strings.Repeat("s3cr3t", 2000)
	bad := strings.Replace(startJSON(1), `"op":"exec"`, `"op":"`+secret+`"`, 1)
	status, _, body := post(t, tr.eventsURL(), "application/json", []byte(bad))
	require.Equal(t, http.StatusBadRequest, status)
	assert.True(t, strings.HasPrefix(body, "op: "), body)
	assert.LessOrEqual(t, len(body), maxMessageBytes+len("…\n"))
}

func TestEventsMethodNotAllowed(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	for _, url := range []string{tr.eventsURL(), tr.tracesURL()} {
		for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
			req, err := http.NewRequest(method, url, nil)
			require.NoError(t, err)
			status, hdr, _ := do(t, req)
			assert.Equal(t, http.StatusMethodNotAllowed, status, "%s %s", method, url)
			assert.Equal(t, "POST", hdr.Get("Allow"))
		}
	}
}

func TestEventsUnsupportedMediaType(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil)
	for _, ct := range []string{"", "text/plain", "application/x-protobuf", "application/json-seq", "not a media type", "text/secret-TOKEN-abc123"} {
		status, _, body := post(t, tr.eventsURL(), ct, []byte(startJSON(1)))
		assert.Equal(t, http.StatusUnsupportedMediaType, status, "content type %q", ct)
		assert.Contains(t, body, "application/x-ndjson")
		if ct != "" {
			assert.NotContains(t, body, ct, "errors never echo headers")
		}
	}
	status, _, _ := post(t, tr.tracesURL(), "application/x-ndjson", []byte(startJSON(1)))
	assert.Equal(t, http.StatusUnsupportedMediaType, status)
	assert.Zero(t, sink.LogRecordCount())
}

// A charset other than UTF-8 is refused: JSON is UTF-8, and reading such a
// body as UTF-8 all the same would garble it.
func TestEventsCharset(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil)
	for ct, want := range map[string]int{
		"application/json; charset=iso-8859-1": http.StatusUnsupportedMediaType,
		"application/json; charset=utf-16":     http.StatusUnsupportedMediaType,
		"application/json; charset=UTF-8":      http.StatusOK,
		"application/json;charset=utf-8":       http.StatusOK,
	} {
		status, _, _ := post(t, tr.eventsURL(), ct, []byte(startJSON(1)))
		assert.Equal(t, want, status, ct)
	}
	assert.Equal(t, 1, sink.LogRecordCount(), "one event, twice: the second a duplicate")
}

// A Content-Length over max_request_body_size gets 413 before any of the
// body is read: a client that asks with Expect: 100-continue is not told
// to send 20 GiB first.
func TestEventsTooLargeByContentLength(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	for _, encoding := range []string{"", "Content-Encoding: gzip\r\n"} {
		conn := dial(t, tr)
		require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
		_, err := conn.Write([]byte("POST /v1/sandbox/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + encoding +
			"Expect: 100-continue\r\nContent-Length: 21474836480\r\n\r\n"))
		require.NoError(t, err)
		status, err := bufio.NewReader(conn).ReadString('\n')
		require.NoError(t, err)
		assert.Contains(t, status, " 413 ", "with %q", encoding)
	}
}

func TestEventsTooLarge(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil, func(c *Config) { c.ServerConfig.MaxRequestBodySize = 4096 })

	var batch strings.Builder
	for i := 0; batch.Len() <= 4096; i++ {
		batch.WriteString(startJSON(i) + "\n")
	}
	status, _, body := post(t, tr.eventsURL(), "application/x-ndjson", []byte(batch.String()))
	require.Equal(t, http.StatusRequestEntityTooLarge, status, body)
	assert.Contains(t, body, "max_request_body_size")

	// The limit holds for the decompressed body too: a small gzip body
	// that expands beyond it is refused the same way.
	big := gzipped(t, batch.String())
	require.Less(t, len(big), 4096)
	status, body = postEncoded(t, tr.eventsURL(), "application/x-ndjson", "gzip", big)
	require.Equal(t, http.StatusRequestEntityTooLarge, status, body)
	assert.Zero(t, sink.LogRecordCount())

	// A snappy block says its inflated size up front; past the limit it is
	// a 413 as well (confighttp answers it 400).
	block := binary.AppendUvarint(nil, 64<<20)
	block = append(block, "not inflated"...)
	status, body = postEncoded(t, tr.eventsURL(), "application/x-ndjson", "snappy", block)
	require.Equal(t, http.StatusRequestEntityTooLarge, status, body)
	assert.Contains(t, body, "max_request_body_size")

	// So is one whose header says it fits but which is itself past the
	// limit: one literal of 4,096 bytes (tag 61<<2, a 2-byte length - 1).
	block = binary.AppendUvarint(nil, 4096)
	block = append(block, 61<<2, 0xff, 0x0f)
	block = append(block, bytes.Repeat([]byte{'{'}, 4096)...)
	status, body = postEncoded(t, tr.eventsURL(), "application/x-ndjson", "snappy", block)
	require.Equal(t, http.StatusRequestEntityTooLarge, status, body)

	// A header naming an unknown encoding is a 415, whatever it says.
	// (A small body: one over the limit by its length is a 413 first.)
	status, body = postEncoded(t, tr.eventsURL(), "application/x-ndjson", "br; exceeds max request body size", []byte("{}"))
	require.Equal(t, http.StatusUnsupportedMediaType, status, body)
	assert.Zero(t, sink.LogRecordCount())

	// Under the limit, gzip is decoded transparently, in any case (RFC 9110).
	status, body = postEncoded(t, tr.eventsURL(), "application/json", "gzip", gzipped(t, startJSON(1)))
	require.Equal(t, http.StatusOK, status, body)
	status, body = postEncoded(t, tr.eventsURL(), "application/json", " GZip", gzipped(t, startJSON(2)))
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, 2, sink.LogRecordCount())
}

// gzipped is s compressed with gzip.
func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// postEncoded posts body with a Content-Encoding and returns the status
// and the answer.
func postEncoded(t *testing.T, url, contentType, encoding string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Content-Encoding", encoding)
	status, _, answer := do(t, req)
	return status, answer
}

func TestEventsDownstreamRefusal(t *testing.T) {
	logs := new(switchableLogs)
	tr := startReceiver(t, logs, nil)

	logs.setErr(errors.New("memory limiter: data refused"))
	status, hdr, body := post(t, tr.eventsURL(), "application/json", []byte(startJSON(1)))
	require.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "5", hdr.Get("Retry-After"))
	assert.NotContains(t, body, "memory limiter", "the consumer's error text stays inside")

	logs.setErr(consumererror.NewPermanent(errors.New("exporter misconfigured")))
	status, hdr, body = post(t, tr.eventsURL(), "application/json", []byte(startJSON(1)))
	require.Equal(t, http.StatusInternalServerError, status)
	assert.Empty(t, hdr.Get("Retry-After"))
	assert.NotContains(t, body, "misconfigured")

	// An event over the exporter's max_line_bytes is the client's to fix:
	// 413, naming the field and the limit.
	logs.setErr(consumererror.NewPermanent(fmt.Errorf("refused: %w", &auditevent.TooLongError{Field: "data", Size: 5000, Limit: 4096})))
	status, _, body = post(t, tr.eventsURL(), "application/json", []byte(startJSON(1)))
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	assert.Contains(t, body, "data: the event's line would be 5000 bytes, over max_line_bytes (4096 bytes)")

	// So is an event whose Kafka message the broker (or the kafka
	// exporter's producer) refuses as too large: a 500 would be retried
	// for ever by a client that retries 5xx, as the HTTP sinks do.
	logs.setErr(consumererror.NewPermanent(fmt.Errorf("error exporting to topic %q: %w", "sandbox-audit", kerr.MessageTooLarge)))
	status, hdr, body = post(t, tr.eventsURL(), "application/json", []byte(startJSON(1)))
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	assert.Empty(t, hdr.Get("Retry-After"))
	assert.Contains(t, body, "over the Kafka message size limit")

	logs.setErr(nil)
	status, _, body = post(t, tr.eventsURL(), "application/json", []byte(startJSON(1)))
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"accepted":1,"duplicates":0}`, body, "a refused event is not a duplicate when retried")
}

func TestEventsDedupe(t *testing.T) {
	logs := new(switchableLogs)
	tr := startReceiver(t, logs, nil)

	status, _, body := post(t, tr.eventsURL(), "application/json", []byte(startJSON(1)))
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"accepted":1,"duplicates":0}`, body)

	// The exporter replays: the same event again is dropped, not an error.
	status, _, body = post(t, tr.eventsURL(), "application/json", []byte(startJSON(1)))
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"accepted":0,"duplicates":1}`, body)

	// In a batch: the replayed one and a repeat within the batch are
	// dropped, the rest goes on.
	batch := startJSON(1) + "\n" + finishJSON(1) + "\n" + finishJSON(1) + "\n" + startJSON(2) + "\n"
	status, _, body = post(t, tr.eventsURL(), "application/x-ndjson", []byte(batch))
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"accepted":2,"duplicates":2}`, body)
	assert.Equal(t, []string{canonical(t, startJSON(1)), canonical(t, finishJSON(1)), canonical(t, startJSON(2))}, logBodies(&logs.LogsSink))

	// Ids are remembered only once the consumer accepted them: a refused
	// batch retried by the client goes through.
	logs.setErr(errors.New("queue full"))
	batch = startJSON(3) + "\n" + finishJSON(3) + "\n"
	status, _, _ = post(t, tr.eventsURL(), "application/x-ndjson", []byte(batch))
	require.Equal(t, http.StatusServiceUnavailable, status)
	logs.setErr(nil)
	status, _, body = post(t, tr.eventsURL(), "application/x-ndjson", []byte(batch))
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"accepted":2,"duplicates":0}`, body)
	assert.Equal(t, 5, logs.LogRecordCount())
}

func TestEventsDedupeDisabled(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil, func(c *Config) { c.Dedupe.Enabled = false })
	for range 2 {
		status, _, body := post(t, tr.eventsURL(), "application/json", []byte(startJSON(1)))
		require.Equal(t, http.StatusOK, status)
		assert.JSONEq(t, `{"accepted":1,"duplicates":0}`, body)
	}
	assert.Equal(t, 2, sink.LogRecordCount())
}

func TestUnknownPathIs404(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	status, _, _ := post(t, tr.url+"/v1/logs", "application/json", []byte(startJSON(1)))
	assert.Equal(t, http.StatusNotFound, status)
}

// blockFirstLogs holds its first ConsumeLogs call until release is closed.
type blockFirstLogs struct {
	consumertest.LogsSink
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockFirstLogs) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	first := false
	b.once.Do(func() { first = true })
	if first {
		close(b.entered)
		select {
		case <-b.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return b.LogsSink.ConsumeLogs(ctx, ld)
}

// TestEventsDedupeInFlight: a client that timed out resends while its
// first request is still being delivered. The resent event is neither
// delivered a second time nor dropped as a duplicate (the first delivery
// may still fail): the client is asked to retry.
func TestEventsDedupeInFlight(t *testing.T) {
	logs := &blockFirstLogs{entered: make(chan struct{}), release: make(chan struct{})}
	tr := startReceiver(t, logs, nil)
	// Registered after the receiver's cleanup, so it runs first: a failing
	// test does not leave Shutdown waiting for the held request.
	release := sync.OnceFunc(func() { close(logs.release) })
	t.Cleanup(release)

	firstDone := postHeld(t, tr.eventsURL(), "application/json", startJSON(1), logs)

	batch := startJSON(2) + "\n" + startJSON(1) + "\n"
	status, hdr, body := post(t, tr.eventsURL(), "application/x-ndjson", []byte(batch))
	require.Equal(t, http.StatusServiceUnavailable, status, body)
	assert.Equal(t, "5", hdr.Get("Retry-After"))

	release()
	select {
	case status := <-firstDone:
		require.Equal(t, http.StatusOK, status)
	case <-time.After(10 * time.Second):
		t.Fatal("the first request did not finish")
	}

	// The retry: the event the first request delivered is a duplicate now,
	// the other one goes through.
	status, _, body = post(t, tr.eventsURL(), "application/x-ndjson", []byte(batch))
	require.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `{"accepted":1,"duplicates":1}`, body)
	assert.Equal(t, []string{canonical(t, startJSON(1)), canonical(t, startJSON(2))}, logBodies(&logs.LogsSink))
}
