package sandboxauditreceiver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// lz4FrameHeader opens an lz4 frame of independent 4 MiB blocks: magic,
// FLG (version 01, block independence), BD (4 MiB) and the header
// checksum (the second byte of the descriptor's xxh32).
var lz4FrameHeader = []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x70, 0x73}

// TestLZ4DecoderBuffersAreBudgeted: an lz4 decoder takes a block buffer
// and a compressed-block buffer (4 MiB each for this frame, 8 MiB in a
// legacy frame) before it hands the body a byte. A client that sent a
// frame header and most of a compressed block held those megabytes with
// nothing reserved, so a few hundred such connections took gigabytes past
// max_inflight_bytes. The buffers are reserved before the decoder runs: the
// body holds them, and a second one past the budget gets 503.
func TestLZ4DecoderBuffersAreBudgeted(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) {
		c.ServerConfig.MaxRequestBodySize = 4 << 20
		c.MaxInflightBytes = 24 << 20
	})
	// A compressed block said to be 4 MiB - 1 bytes long, 1 MiB of it sent.
	partial := append(append(bytes.Clone(lz4FrameHeader), 0xff, 0xff, 0x3f, 0x00), make([]byte, 1<<20)...)
	openBody(t, tr, 4<<20, partial, "Content-Encoding: lz4\r\n")

	waitReserved(t, tr, 8<<20)

	second := openBody(t, tr, 4<<20, partial, "Content-Encoding: lz4\r\n")
	require.NoError(t, second.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(second), nil)
	require.NoError(t, err, "a second lz4 body past the budget is not answered")
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "5", resp.Header.Get("Retry-After"))
}

// TestZstdDecoderBlockIsBudgeted: a zstd decoder reads a whole compressed
// block, up to 128 KiB, before the body gets a byte of it. A client that
// sent a frame header and most of a block held that with nothing reserved,
// on each of max_connections connections. It is reserved first.
func TestZstdDecoderBlockIsBudgeted(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	// Magic, no content size, an 8 MiB window; a compressed block said to be
	// 128 KiB - 1 bytes long, 100 KiB of it sent.
	header := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x68}
	const size = 128<<10 - 1
	block := uint32(size<<3 | 2<<1)
	partial := append(append(header, byte(block), byte(block>>8), byte(block>>16)), make([]byte, 100<<10)...)
	openBody(t, tr, 1<<20, partial, "Content-Encoding: zstd\r\n")
	waitReserved(t, tr, 128<<10)
}

// TestFramedSnappyDecoderChunkIsBudgeted: an x-snappy-framed decoder reads
// a whole chunk, up to 76 KiB compressed, into a buffer beside its 64 KiB
// of decoded bytes before the body gets a byte of it; a client that sent
// most of a chunk held them with nothing reserved. They are reserved
// first.
func TestFramedSnappyDecoderChunkIsBudgeted(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	size := 76000
	partial := append([]byte{0xff, 0x06, 0x00, 0x00, 's', 'N', 'a', 'P', 'p', 'Y', 0x00, byte(size), byte(size >> 8), byte(size >> 16)},
		make([]byte, 70000)...)
	openBody(t, tr, 1<<20, partial, "Content-Encoding: x-snappy-framed\r\n")
	waitReserved(t, tr, 128<<10)
}

// TestLZ4BodyIsAccepted: with its decoder's buffers reserved, a small lz4
// batch is still taken whole, and the reservation is given back.
func TestLZ4BodyIsAccepted(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil)
	var body bytes.Buffer
	w := lz4.NewWriter(&body)
	_, err := w.Write([]byte(startJSON(1) + "\n" + finishJSON(1) + "\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	req, err := http.NewRequest(http.MethodPost, tr.eventsURL(), &body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentTypeNDJSON)
	req.Header.Set("Content-Encoding", "lz4")
	status, _, msg := do(t, req)
	require.Equal(t, http.StatusOK, status, msg)
	assert.Equal(t, 2, sink.LogRecordCount())
	used, peak := tr.r.admit.InUse()
	assert.Zero(t, used)
	assert.GreaterOrEqual(t, peak, int64(16<<20), "the decoder's buffers were reserved")
}

// waitReserved waits, for a few seconds at most, until the receiver's
// budgets hold at least want bytes: what a decoder stalled on a partial
// block takes.
func waitReserved(t *testing.T, tr *testReceiver, want int64) {
	t.Helper()
	for range 500 {
		if used, _ := tr.r.admit.InUse(); used >= want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	used, _ := tr.r.admit.InUse()
	require.GreaterOrEqual(t, used, want, "the decoder's buffers are not reserved")
}

// TestCompressedBodyThatDecodesToNothingIsCut: a gzip body of empty
// deflate blocks brings bytes at any rate pacing asks for, yet decodes to
// nothing, so it holds no budget: clients that sent such bodies on every
// connection kept the others waiting for one until read_timeout. A
// streamed compressed body must decode to about as much as arrives; this
// one is refused (400) once it is 64 KiB behind.
func TestCompressedBodyThatDecodesToNothingIsCut(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) {
		c.ServerConfig.ReadTimeout = time.Minute
		c.ServerConfig.WriteTimeout = time.Minute
	})
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	for body.Len() < 200<<10 {
		require.NoError(t, zw.Flush()) // an empty stored block each
	}
	conn := openBody(t, tr, 1<<20, body.Bytes(), "Content-Encoding: gzip\r\n")
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "a body decoding to nothing is not answered before read_timeout")
	msg, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, string(msg))
	assert.Contains(t, string(msg), "as Content-Encoding gzip: ")
	assert.Contains(t, string(msg), " decode to 0;")
}
