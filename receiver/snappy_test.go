package sandboxauditreceiver

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// TestStalledSnappyBodyIsBudgetedAndPaced: a snappy block cannot be
// inflated before all of it arrived, so its compressed bytes are read
// like any body: into the budget, at min_body_rate. Read unbudgeted and
// unpaced, 40 connections sending 1 MB blocks of 20 MiB each took the
// collector past 1 GiB, and a stalled one was held until read_timeout.
func TestStalledSnappyBodyIsBudgetedAndPaced(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) {
		c.ServerConfig.ReadTimeout = 3 * time.Second
	})
	tr.r.bodyGrace = 300 * time.Millisecond
	noise := make([]byte, 200<<10) // random: snappy cannot shrink it
	_, err := rand.Read(noise)
	require.NoError(t, err)
	block := snappy.Encode(nil, noise)
	conn := openBody(t, tr, len(block), block[:100<<10], "Content-Encoding: snappy\r\n")
	waitFor(t, "the compressed bytes to be counted in the budget", func() bool {
		used, _ := tr.r.admit.Large().InUse()
		return used >= 64<<10
	})
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	status, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, status, " 408 ", "a stalled snappy body is cut by min_body_rate")
}

// TestSnappyBodies: both forms confighttp takes under "snappy", the block
// and the framed stream, are still inflated; a block that is not one is a
// 400 that says which encoding failed; one that says it inflates past
// max_request_body_size is a 413; with snappy left out of
// compression_algorithms it is a 415.
func TestSnappyBodies(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil, func(c *Config) { c.ServerConfig.MaxRequestBodySize = 64 << 10 })
	batch := startJSON(1) + "\n" + finishJSON(1) + "\n"

	status, body := postEncoded(t, tr.eventsURL(), contentTypeNDJSON, "snappy", snappy.Encode(nil, []byte(batch)))
	require.Equal(t, http.StatusOK, status, body)
	var framed bytes.Buffer
	w := snappy.NewBufferedWriter(&framed)
	_, err := w.Write([]byte(startJSON(2) + "\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	status, body = postEncoded(t, tr.eventsURL(), contentTypeNDJSON, "snappy", framed.Bytes())
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, 3, sink.LogRecordCount())

	status, body = postEncoded(t, tr.eventsURL(), contentTypeNDJSON, "snappy", []byte("\x10not snappy"))
	require.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, "snappy")
	// 64 KiB of '{' compresses to a few KB and inflates past the limit.
	status, body = postEncoded(t, tr.eventsURL(), contentTypeNDJSON, "snappy", snappy.Encode(nil, bytes.Repeat([]byte("{"), 64<<10+1)))
	require.Equal(t, http.StatusRequestEntityTooLarge, status, body)
	assert.Contains(t, body, "max_request_body_size")
	assert.Equal(t, 3, sink.LogRecordCount())

	off := startReceiver(t, sink, nil, func(c *Config) { c.ServerConfig.CompressionAlgorithms = []string{"", "gzip"} })
	status, body = postEncoded(t, off.eventsURL(), contentTypeNDJSON, "snappy", snappy.Encode(nil, []byte(batch)))
	require.Equal(t, http.StatusUnsupportedMediaType, status, body)
	assert.True(t, strings.HasPrefix(body, "unsupported Content-Encoding"), body)
}
