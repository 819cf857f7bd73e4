package sandboxauditreceiver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// sendCutShort writes a request whose body stops before its framing says it
// ends (head carries the framing), half-closes the connection and returns
// the answer.
func sendCutShort(t *testing.T, tr *testReceiver, head string, body []byte) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", tr.r.addr.String())
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	_, err = io.WriteString(conn, head)
	require.NoError(t, err)
	_, err = conn.Write(body)
	require.NoError(t, err)
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(answer)
}

// TestBodyCutShortIsRefused: a body that ends before its Content-Length,
// or a chunked body without its last chunk, is refused with a 400 that says
// so, and none of its complete lines is delivered: the client learns that
// the batch did not arrive, instead of a 200 for the part that did.
func TestBodyCutShortIsRefused(t *testing.T) {
	body := ndjsonBody("cut", 10)
	part := body[:bytes.Index(body, []byte("\n"))*3+3] // three whole lines and a bit
	cases := map[string]struct {
		head string
		body []byte
	}{
		"content-length": {
			head: fmt.Sprintf("POST %%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: %d\r\n\r\n", len(body)),
			body: part,
		},
		"chunked": {
			head: "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n",
			body: fmt.Appendf(nil, "%x\r\n%s\r\n", len(part), part), // no terminating 0-chunk
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			logs := new(consumertest.LogsSink)
			tr := startReceiver(t, logs, nil)
			status, answer := sendCutShort(t, tr, fmt.Sprintf(c.head, tr.r.cfg.EventsPath), c.body)
			assert.Equal(t, http.StatusBadRequest, status, answer)
			assert.Contains(t, answer, "cannot read request body: unexpected EOF")
			assert.Zero(t, logs.LogRecordCount(), "lines of a cut body delivered")
		})
	}
}

// TestTracesBodyCutShortIsRefused: the OTLP/HTTP traces intake refuses a
// protobuf body cut short, where the part that arrived may itself decode
// (a message of whole ResourceSpans).
func TestTracesBodyCutShortIsRefused(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil)
	body := marshalTraces(t, sandboxTraces(), "application/x-protobuf")
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n",
		tr.r.cfg.TracesPath, len(body)+100)
	status, answer := sendCutShort(t, tr, head, body)
	assert.Equal(t, http.StatusBadRequest, status, answer)
	assert.Zero(t, logs.LogRecordCount(), "events of a cut body delivered")
}

// TestGzipBodyCutShortIsRefused: a gzip body whose stream stops part-way
// (after a flush, so the lines before the cut inflate) or lacks only its
// trailer (so its checksum is never checked) is refused, not delivered in
// part or unchecked.
func TestGzipBodyCutShortIsRefused(t *testing.T) {
	body := ndjsonBody("gz", 10)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write(body[:len(body)/2])
	require.NoError(t, err)
	require.NoError(t, zw.Flush())
	flushed := gz.Len()
	_, err = zw.Write(body[len(body)/2:])
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	for name, cut := range map[string][]byte{
		"mid-stream":      gz.Bytes()[:flushed],
		"without trailer": gz.Bytes()[:gz.Len()-8],
	} {
		t.Run(name, func(t *testing.T) {
			logs := new(consumertest.LogsSink)
			tr := startReceiver(t, logs, nil)
			status, answer := postEncoded(t, tr.eventsURL(), contentTypeNDJSON, "gzip", cut)
			assert.Equal(t, http.StatusBadRequest, status, answer)
			assert.Contains(t, answer, "cannot read request body")
			assert.Zero(t, logs.LogRecordCount(), "lines of a cut body delivered")
		})
	}
	// The whole stream is accepted, so the refusals above are the cut's.
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil)
	status, answer := postEncoded(t, tr.eventsURL(), contentTypeNDJSON, "gzip", gz.Bytes())
	require.Equal(t, http.StatusOK, status, answer)
	assert.Equal(t, 10, logs.LogRecordCount())
}

// TestWithheldBodyIs408: a body that stops arriving (a slow client or
// network, not a bad batch) is answered 408 once read_timeout has passed,
// so that a sender retries it rather than dropping it as a 400; nothing of
// it is delivered.
func TestWithheldBodyIs408(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil, func(c *Config) {
		c.ServerConfig.ReadTimeout = 300 * time.Millisecond
	})
	body := ndjsonBody("withheld", 10)
	conn := openBody(t, tr, len(body), body[:len(body)/2], "")
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode, string(answer))
	assert.Contains(t, string(answer), "read_timeout")
	assert.Zero(t, logs.LogRecordCount())
}

// TestBodyCutBetweenFramesIsRefused: a zstd or lz4 body whose transfer
// stops where a frame ends (its Content-Length, or its last chunk, still
// to come) is refused as cut short, though the decoder takes the end of
// its input there for the end of the stream: the first frame's lines are
// not delivered.
func TestBodyCutBetweenFramesIsRefused(t *testing.T) {
	for _, enc := range []string{"zstd", "lz4"} {
		first := compressAs(t, enc, ndjsonBody("first", 3))
		whole := append(bytes.Clone(first), compressAs(t, enc, ndjsonBody("second", 3))...)
		for name, c := range map[string]struct{ head, body string }{
			"content-length": {
				head: fmt.Sprintf("Content-Length: %d\r\n", len(whole)),
				body: string(first),
			},
			"chunked": {
				head: "Transfer-Encoding: chunked\r\n",
				body: fmt.Sprintf("%x\r\n%s\r\n", len(first), first), // no terminating 0-chunk
			},
		} {
			logs := new(consumertest.LogsSink)
			tr := startReceiver(t, logs, nil)
			head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Encoding: %s\r\n%s\r\n",
				tr.r.cfg.EventsPath, enc, c.head)
			status, answer := sendCutShort(t, tr, head, []byte(c.body))
			assert.Equal(t, http.StatusBadRequest, status, "%s, %s: %s", enc, name, answer)
			assert.Equal(t, "cannot read request body: unexpected EOF\n", answer, "%s, %s", enc, name)
			assert.Zero(t, logs.LogRecordCount(), "%s, %s: lines of a cut body delivered", enc, name)
			used, _ := tr.r.admit.InUse()
			assert.Zero(t, used, "%s, %s", enc, name)
		}
	}
}
