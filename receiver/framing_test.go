package sandboxauditreceiver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// TestChunkedBesideContentLengthClosesTheConnection: a request with both
// Transfer-Encoding: chunked and Content-Length is read by its chunks, and
// the connection is closed after the answer (RFC 9112, 6.3): a proxy in
// front that counted the body by Content-Length would otherwise have its
// next bytes, here a second request, read by the receiver as a request
// of their own.
func TestChunkedBesideContentLengthClosesTheConnection(t *testing.T) {
	for name, lengthOf := range map[string]func(chunked string) int{
		"length of the chunks": func(chunked string) int { return len(chunked) },
		"shorter":              func(string) int { return 4 },
	} {
		t.Run(name, func(t *testing.T) {
			logs := new(consumertest.LogsSink)
			tr := startReceiver(t, logs, nil)
			body := startJSON(1)
			chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
			second := startJSON(2)
			smuggled := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				tr.r.cfg.EventsPath, len(second), second)
			conn := dial(t, tr)
			require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
			_, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%s%s",
				tr.r.cfg.EventsPath, lengthOf(chunked), chunked, smuggled)
			require.NoError(t, err)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.True(t, resp.Close, "the answer says the connection closes")
			_, err = http.ReadResponse(br, nil)
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "the connection stayed open")
			assert.Error(t, err, "the bytes after the chunks were served as a request")
			assert.Equal(t, 1, logs.LogRecordCount(), "only the chunked request's event is delivered")
		})
	}
}

// TestAsteriskTargetIsRefusedReadably: the request target "*" belongs to
// OPTIONS (which net/http answers itself); any other method with it, such
// as an HTTP/2 client's preface, gets a 400 that says what to send instead
// and is counted, not an empty 400.
func TestAsteriskTargetIsRefusedReadably(t *testing.T) {
	set, tel := recordingSettings(t)
	tr := startReceiverWith(t, set, new(consumertest.LogsSink), nil)
	for _, req := range []string{
		"POST * HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
	} {
		conn := dial(t, tr)
		require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
		_, err := io.WriteString(conn, req)
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		answer, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, req)
		assert.Contains(t, string(answer), "HTTP/1.1", req)
		assert.Contains(t, string(answer), tr.r.cfg.EventsPath, req)
	}
	assert.Equal(t, map[string]int64{"endpoint=other,http.response.status_code=400,outcome=malformed": 2},
		counterValues(t, tel, "otelcol_sandboxaudit_receiver_requests"))
}

// TestContentEncodingOnSeveralLines: Content-Encoding sent on two lines is
// the list of both (RFC 9110, 5.3), answered as the same list on one line
// is (415), not decoded by its first line alone and refused as bad JSON.
func TestContentEncodingOnSeveralLines(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil)
	twice := gzipped(t, string(gzipped(t, startJSON(1))))
	for _, head := range []string{"Content-Encoding: gzip, gzip\r\n", "Content-Encoding: gzip\r\nContent-Encoding: gzip\r\n"} {
		status, answer := sendCutShort(t, tr, fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n",
			tr.r.cfg.EventsPath, head, len(twice)), twice)
		assert.Equal(t, http.StatusUnsupportedMediaType, status, "%q: %s", head, answer)
		assert.Contains(t, answer, "Content-Encoding", head)
	}
	assert.Zero(t, logs.LogRecordCount())
}

// TestCharsetRefusalSaysCharset: a type the intake takes, in any case,
// with a charset other than UTF-8 is a 415 that names the charset as what
// is wrong, on both intakes, and does not quote it.
func TestCharsetRefusalSaysCharset(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	for url, ct := range map[string]string{
		tr.eventsURL(): "application/JSON; charset=latin1",
		tr.tracesURL(): "application/x-protobuf; charset=latin1",
	} {
		status, _, answer := post(t, url, ct, []byte("{}"))
		assert.Equal(t, http.StatusUnsupportedMediaType, status, ct)
		assert.Contains(t, answer, "charset=utf-8", ct)
		assert.NotContains(t, answer, "latin1", ct)
	}
	status, _, answer := post(t, tr.eventsURL(), "text/plain; charset=latin1", []byte("{}"))
	assert.Equal(t, http.StatusUnsupportedMediaType, status)
	assert.NotContains(t, answer, "charset", "the type is what is wrong there")
}

// TestLongChunkLineIsNamed: a chunk-size line over net/http's 4096 bytes
// (a huge chunk extension) was answered "header line too long", which
// sent the client looking at its headers; the answer names the chunk line.
func TestLongChunkLineIsNamed(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	conn := dial(t, tr)
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5;%s\r\n",
		tr.r.cfg.EventsPath, strings.Repeat("e", 5000))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "chunk-size line")
	assert.NotContains(t, string(body), "header")
}
