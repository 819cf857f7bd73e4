package sandboxauditreceiver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"
)

// waitFor polls cond every 5ms for at most 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 2000 {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// openBody sends a request's headers and the first part of its body on a
// raw connection and leaves the rest unsent.
func openBody(t *testing.T, tr *testReceiver, contentLength int, first []byte, extraHeaders string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", tr.r.addr.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: %d\r\n%s\r\n",
		tr.r.cfg.EventsPath, contentLength, extraHeaders)
	require.NoError(t, err)
	_, err = conn.Write(first)
	require.NoError(t, err)
	return conn
}

// TestContentLengthDoesNotPreallocate: 100 connections each announce a
// 20 MiB body and send a little more than a first buffer, 50 of them a
// little more than two buffers. The receiver reserves (and allocates)
// buffer space for what arrived, the full buffers and the one being
// filled, not for what the header claims; buffers double from 4 KiB, so a
// client that stalls just past a buffer holds at most three times what it
// sent.
func TestContentLengthDoesNotPreallocate(t *testing.T) {
	const conns = 100
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	for i := range conns {
		sent := 4<<10 + 1
		if i%2 == 1 {
			sent = (4+8)<<10 + 1
		}
		openBody(t, tr, 20<<20, bytes.Repeat([]byte("{"), sent), "")
	}
	const want = conns/2*(4+8)<<10 + conns/2*(4+8+16)<<10
	waitFor(t, "every connection's buffer being filled", func() bool {
		used, _ := tr.r.admit.InUse()
		return used >= want
	})
	used, peak := tr.r.admit.InUse()
	assert.Equal(t, int64(want), used, "bytes reserved for 100 stalled bodies")
	assert.Equal(t, int64(want), peak)
}

// reservedWhileReading is what a body holds while its reader waits for
// more after sent bytes: its full buffers (4, 8, 16, then 32 KiB each) and
// the one being filled, which is reserved before it is read into.
func reservedWhileReading(sent int) int64 {
	held, filled := 0, 0
	for size := 4 << 10; filled <= sent; size = min(2*size, 32<<10) {
		if filled > 0 || sent >= size { // the first buffer counts once full
			held += size
		}
		filled += size
	}
	return int64(held)
}

// TestIdleConnectionsHoldNoBudget: connections that send their headers
// and then nothing (or less than a first buffer) reserve nothing, so they
// cannot lock other clients out however many there are; they used to
// take a buffer each.
func TestIdleConnectionsHoldNoBudget(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil, func(c *Config) {
		c.ServerConfig.MaxRequestBodySize = 64 << 10
		c.MaxInflightBytes = 64<<10 + 1
	})
	for i := range 20 {
		openBody(t, tr, 100, []byte("{")[:i%2], "")
	}
	waitFor(t, "the server to read the 20 requests", func() bool {
		return tr.r.inflight.Count() == 20
	})
	status, _, body := post(t, tr.eventsURL(), contentTypeJSON, []byte(startJSON(1)))
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, 1, logs.LogRecordCount())
	used, _ := tr.r.admit.InUse()
	assert.Zero(t, used)
}

// TestMultiBufferBodyArrivesWhole: a body of many buffers, lines crossing
// buffer boundaries, is delivered event for event, and once answered holds
// no budget.
func TestMultiBufferBodyArrivesWhole(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil)
	body := ndjsonBody("whole", 1000)
	require.Greater(t, len(body), 8*admission.MaxBuffer)
	status, _, got := post(t, tr.eventsURL(), contentTypeNDJSON, body)
	require.Equal(t, http.StatusOK, status, got)
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	require.Len(t, logBodies(logs), len(lines))
	for i, l := range logBodies(logs) {
		var a, b map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &a))
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &b))
		require.Equal(t, b["event_id"], a["event_id"], "event %d", i)
	}
	used, _ := tr.r.admit.InUse()
	assert.Zero(t, used)
}

// ndjsonBody is n valid start events of distinct sessions.
func ndjsonBody(tag string, n int) []byte {
	var b bytes.Buffer
	for i := range n {
		b.WriteString(sessionStartJSON(uuid.NewSHA1(testSession, []byte(fmt.Sprint(tag, i))), i))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestOverBudgetIs503ThenRetrySucceeds: while one large body is being read
// and holds most of max_inflight_bytes, a second request does not fit: it
// gets 503 with Retry-After and nothing of it is delivered. Once the first
// request is answered its reservation is back and the retry is accepted:
// nothing is lost.
func TestOverBudgetIs503ThenRetrySucceeds(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil, func(c *Config) {
		c.ServerConfig.MaxRequestBodySize = 1 << 20
		c.MaxInflightBytes = 1<<20 + 1
	})
	big := ndjsonBody("big", 2800) // about 950 KB
	require.Less(t, len(big), 1<<20)
	sent := len(big) - 1000
	conn := openBody(t, tr, len(big), big[:sent], "")
	waitFor(t, "the large body's reservation", func() bool {
		used, _ := tr.r.admit.InUse()
		return used == reservedWhileReading(sent)
	})

	small := ndjsonBody("small", 600) // about 200 KB: does not fit beside it
	status, hdr, body := post(t, tr.eventsURL(), contentTypeNDJSON, small)
	assert.Equal(t, http.StatusServiceUnavailable, status, body)
	assert.Equal(t, "5", hdr.Get("Retry-After"))
	assert.Contains(t, body, "max_inflight_bytes")
	assert.Equal(t, 0, logs.LogRecordCount(), "nothing of the refused request is delivered")

	_, err := conn.Write(big[len(big)-1000:])
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	used, _ := tr.r.admit.InUse()
	assert.Zero(t, used, "an answered request holds no budget")

	status, _, body = post(t, tr.eventsURL(), contentTypeNDJSON, small)
	assert.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, 3400, logs.LogRecordCount(), "both requests delivered in full")
}

// gzipBomb is a gzip body that inflates to n zero bytes.
func gzipBomb(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	require.NoError(t, err)
	_, err = io.CopyN(zw, zeroReader{}, int64(n))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestConcurrentGzipBombsStayInBudget: 40 concurrent gzip bodies that each
// inflate past max_request_body_size. The bytes reserved never pass
// max_inflight_bytes; each request is answered 413 (it reached the body
// limit) or 503 (the budget was spent first, retry later), never 200.
func TestConcurrentGzipBombsStayInBudget(t *testing.T) {
	const bombs = 40
	const budget = 16 << 20
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) {
		c.ServerConfig.MaxRequestBodySize = 4 << 20
		c.MaxInflightBytes = budget
	})
	bomb := gzipBomb(t, 8<<20)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range bombs {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPost, tr.eventsURL(), bytes.NewReader(bomb))
			if !assert.NoError(t, err) {
				return
			}
			req.Header.Set("Content-Type", contentTypeNDJSON)
			req.Header.Set("Content-Encoding", "gzip")
			resp, err := http.DefaultClient.Do(req)
			if !assert.NoError(t, err) {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			mu.Lock()
			statuses[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	used, peak := tr.r.admit.InUse()
	assert.Zero(t, used)
	assert.LessOrEqual(t, peak, int64(budget))
	assert.Equal(t, bombs, statuses[http.StatusRequestEntityTooLarge]+statuses[http.StatusServiceUnavailable], "statuses: %v", statuses)
	assert.Positive(t, statuses[http.StatusRequestEntityTooLarge], "statuses: %v", statuses)
}

// TestTricklingClientIsCut: a client that sends its body one byte at a
// time is disconnected once read_timeout has passed, instead of holding the
// connection for as long as it keeps trickling.
func TestTricklingClientIsCut(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) {
		c.ServerConfig.ReadTimeout = 300 * time.Millisecond
	})
	body := startJSON(1) + "\n"
	conn := openBody(t, tr, len(body), nil, "")
	// 60 bytes at 50ms: 3s of trickling, ten times the timeout.
	var writeErr error
	sent := 0
	for i := range 60 {
		time.Sleep(50 * time.Millisecond)
		if _, writeErr = conn.Write([]byte{body[i]}); writeErr != nil {
			break
		}
		sent++
	}
	// The server either closed the connection under us (a write failed) or
	// answered and closed it; it never reads the whole trickle.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	rest, _ := io.ReadAll(conn)
	if writeErr == nil {
		assert.NotContains(t, string(rest), "200 OK", "the trickled request must not be served")
	}
	assert.Less(t, sent, 60, "every trickled byte was accepted: the connection was not cut (read: %q)", strings.TrimSpace(string(rest)))
}

// delEvent is a start event whose data holds n raw DEL bytes: valid JSON
// of about n bytes whose canonical line, with each DEL escaped as \u007f,
// is about 6n.
func delEvent(n int) string {
	return strings.Replace(startJSON(n), `"data":{`, `"data":{"x":"`+strings.Repeat("\x7f", n)+`",`, 1)
}

// TestBudgetCountsWhatEventsDecodeTo: max_inflight_bytes counts a request
// at the size of its events' canonical lines when that is more than its
// body, since the pipeline's copies are made of those. A client sending
// events full of escapes (six times their JSON) used to hold many times
// the budget.
func TestBudgetCountsWhatEventsDecodeTo(t *testing.T) {
	logs := &blockFirstLogs{entered: make(chan struct{}), release: make(chan struct{})}
	tr := startReceiver(t, logs, nil, func(c *Config) {
		c.ServerConfig.MaxRequestBodySize = 1 << 20
		c.MaxInflightBytes = 2 << 20
	})
	release := sync.OnceFunc(func() { close(logs.release) })
	t.Cleanup(release)

	firstDone := postHeld(t, tr.eventsURL(), contentTypeJSON, delEvent(300<<10), logs)
	used, _ := tr.r.admit.InUse()
	assert.GreaterOrEqual(t, used, int64(6*300<<10), "the held request counts its canonical line, not its body")

	// Its body would fit beside the first; its line does not.
	second := delEvent(301 << 10)
	status, hdr, body := post(t, tr.eventsURL(), contentTypeJSON, []byte(second))
	require.Equal(t, http.StatusServiceUnavailable, status, body)
	assert.Equal(t, "5", hdr.Get("Retry-After"))
	// That is known before decoding it: a body that would not even decode
	// gets the 503, not the 400, so it was never decoded.
	status, _, body = post(t, tr.eventsURL(), contentTypeJSON, []byte(second[:len(second)-1]))
	require.Equal(t, http.StatusServiceUnavailable, status, body)

	release()
	require.Equal(t, http.StatusOK, <-firstDone)
	status, _, body = post(t, tr.eventsURL(), contentTypeJSON, []byte(second))
	require.Equal(t, http.StatusOK, status, body)

	// One whose line is more than the whole budget takes all of it: alone,
	// it is accepted.
	status, _, body = post(t, tr.eventsURL(), contentTypeJSON, []byte(delEvent(500<<10)))
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, 3, logs.LogRecordCount())
	used, _ = tr.r.admit.InUse()
	assert.Zero(t, used)
}

// TestLargeBatchBudgetCountsWhatItDecodesTo: the same for an ndjson batch
// of more than deliverPiece events, which is validated whole first.
func TestLargeBatchBudgetCountsWhatItDecodesTo(t *testing.T) {
	logs := &blockFirstLogs{entered: make(chan struct{}), release: make(chan struct{})}
	tr := startReceiver(t, logs, nil, func(c *Config) {
		c.ServerConfig.MaxRequestBodySize = 3 << 20
		c.MaxInflightBytes = 4 << 20
		c.SmallBodyBytes = 0 // the held single event shares the batch's budget
	})
	release := sync.OnceFunc(func() { close(logs.release) })
	t.Cleanup(release)
	firstDone := postHeld(t, tr.eventsURL(), contentTypeJSON, startJSON(1), logs)

	var batch strings.Builder
	for i := range deliverPiece + 100 {
		batch.WriteString(strings.Replace(delEvent(200), startJSON(200)[:60], sessionStartJSON(testSession, 1000+i)[:60], 1))
		batch.WriteByte('\n')
	}
	require.Less(t, batch.Len(), 3<<20, "the body fits beside the held request")
	status, _, body := post(t, tr.eventsURL(), contentTypeNDJSON, []byte(batch.String()))
	require.Equal(t, http.StatusServiceUnavailable, status, body)

	release()
	require.Equal(t, http.StatusOK, <-firstDone)
	status, _, body = post(t, tr.eventsURL(), contentTypeNDJSON, []byte(batch.String()))
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, 1+deliverPiece+100, logs.LogRecordCount())
}

// postHeld posts body from another goroutine and returns once logs holds
// it in its first ConsumeLogs; the status arrives on the channel once
// logs releases it (0 if the request failed).
func postHeld(t *testing.T, url, contentType, body string, logs *blockFirstLogs) <-chan int {
	t.Helper()
	done := make(chan int, 1)
	go func() {
		// Not post: require must not stop the test from this goroutine.
		resp, err := http.Post(url, contentType, strings.NewReader(body))
		if err != nil {
			done <- 0
			return
		}
		_ = resp.Body.Close()
		done <- resp.StatusCode
	}()
	select {
	case <-logs.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the held request never reached the consumer")
	}
	return done
}

// TestBudgetIsSettledToTheLines: the bound taken before decoding (two
// more bytes per byte of a UTF-8 sequence) is given back down to the
// lines' exact size once decoded, so non-ASCII text does not hold three
// times its body for the whole request.
func TestBudgetIsSettledToTheLines(t *testing.T) {
	logs := &blockFirstLogs{entered: make(chan struct{}), release: make(chan struct{})}
	tr := startReceiver(t, logs, nil)
	release := sync.OnceFunc(func() { close(logs.release) })
	t.Cleanup(release)
	body := strings.Replace(startJSON(1), `"data":{`, `"data":{"x":"`+strings.Repeat("日本語", 100<<10)+`",`, 1)
	ev, err := auditevent.Decode([]byte(body))
	require.NoError(t, err)
	done := postHeld(t, tr.eventsURL(), contentTypeJSON, body, logs)

	used, _ := tr.r.admit.InUse()
	assert.Less(t, used, admission.EscapeBound([]byte(body)), "the bound was given back")
	assert.GreaterOrEqual(t, used, int64(auditevent.EncodedLen(&ev)))
	release()
	require.Equal(t, http.StatusOK, <-done)
}

// TestOTLPIntakeCountsItsLines: spans posted to the traces intake are
// counted at their events' lines too, as events are.
func TestOTLPIntakeCountsItsLines(t *testing.T) {
	logs := &blockFirstLogs{entered: make(chan struct{}), release: make(chan struct{})}
	tr := startReceiver(t, logs, nil)
	release := sync.OnceFunc(func() { close(logs.release) })
	t.Cleanup(release)
	td := sandboxTraces()
	data := `{"x":"` + strings.Repeat("\x7f", 200<<10) + `"}`
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("sandbox.start_data", data)
	body := marshalTraces(t, td, contentTypeProtobuf)
	done := postHeld(t, tr.tracesURL(), contentTypeProtobuf, string(body), logs)

	used, _ := tr.r.admit.InUse()
	assert.GreaterOrEqual(t, used, int64(6*200<<10), "the start's line, DEL escaped, is counted")
	release()
	require.Equal(t, http.StatusOK, <-done)
}
