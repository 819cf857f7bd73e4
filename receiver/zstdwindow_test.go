package sandboxauditreceiver

import (
	"bufio"
	"net/http"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// zstdFrameHeader opens a zstd frame with no content size, no checksum and
// a window of 2^(10+log) bytes.
func zstdFrameHeader(log byte) []byte {
	return []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, log << 3}
}

// zstdRawBlock is a raw (stored) block of n bytes, the frame's last if last.
func zstdRawBlock(n int, last bool) []byte {
	h := uint32(n) << 3 // block type 0: raw
	if last {
		h |= 1
	}
	b := []byte{byte(h), byte(h >> 8), byte(h >> 16)}
	for range n {
		b = append(b, '\n')
	}
	return b
}

// TestZstdWindowIsBudgeted: a zstd decoder allocates the window its frame
// declares (8 MiB from an encoder that did not know the content's size)
// when it reads the frame's first block, and keeps what it decodes there
// beside the body's own buffers. A body that sent a header and one small
// block held those 8 MiB with 512 KiB reserved, so clients stalling such
// bodies took a multiple of max_inflight_bytes. The window is reserved
// before the decoder reads the frame.
func TestZstdWindowIsBudgeted(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	partial := append(zstdFrameHeader(13), zstdRawBlock(1000, false)...)
	openBody(t, tr, 1<<20, partial, "Content-Encoding: zstd\r\n")
	waitReserved(t, tr, 8<<20)
}

// TestZstdWindowOfALaterFrameIsBudgeted: each frame of a body declares a
// window of its own; a small first frame does not let a second one take
// 8 MiB unreserved.
func TestZstdWindowOfALaterFrameIsBudgeted(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	first := enc.EncodeAll([]byte(startJSON(1)+"\n"), nil)
	require.NoError(t, enc.Close())
	partial := append(append(first, zstdFrameHeader(13)...), zstdRawBlock(1000, false)...)
	openBody(t, tr, 1<<20, partial, "Content-Encoding: zstd\r\n")
	waitReserved(t, tr, 8<<20)
}

// TestZstdWindowsPastTheBudgetAreRefused: with their windows reserved, a
// third stalled body declaring 8 MiB gets 503 from a 20 MiB budget that
// two of them fill.
func TestZstdWindowsPastTheBudgetAreRefused(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil, func(c *Config) {
		c.ServerConfig.MaxRequestBodySize = 4 << 20
		c.MaxInflightBytes = 20 << 20
	})
	partial := append(zstdFrameHeader(13), zstdRawBlock(1000, false)...)
	for range 2 {
		openBody(t, tr, 1<<20, partial, "Content-Encoding: zstd\r\n")
	}
	waitReserved(t, tr, 16<<20)
	third := openBody(t, tr, 1<<20, partial, "Content-Encoding: zstd\r\n")
	require.NoError(t, third.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	require.NoError(t, err, "a third window past the budget is not answered")
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "5", resp.Header.Get("Retry-After"))
}

// TestZstdWindowOverTheBoundIsRefused: a frame declaring a window over
// what the receiver decodes with (max_request_body_size, at least 8 MiB)
// gets a 400 that says so, whichever frame of the body declares it, and
// nothing is reserved for it.
func TestZstdWindowOverTheBoundIsRefused(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	first := enc.EncodeAll([]byte(startJSON(1)+"\n"), nil)
	require.NoError(t, enc.Close())
	for name, log := range map[string]byte{"64 MiB": 16, "2 GiB": 21} {
		for _, lead := range [][]byte{nil, first} {
			body := append(append(append([]byte(nil), lead...), zstdFrameHeader(log)...), zstdRawBlock(10, true)...)
			status, answer := postEncoded(t, tr.eventsURL(), contentTypeNDJSON, "zstd", body)
			assert.Equal(t, http.StatusBadRequest, status, "%s window after %d bytes: %s", name, len(lead), answer)
			assert.Contains(t, answer, "Content-Encoding zstd: ", name)
			assert.Contains(t, answer, "window", name)
			assert.Contains(t, answer, "max_request_body_size", name)
		}
	}
	used, peak := tr.r.admit.InUse()
	assert.Zero(t, used)
	assert.Less(t, peak, int64(8<<20), "a window refused was reserved")
}

// TestZstdBodyIsAccepted: with its window reserved, a zstd batch written
// by a streaming encoder (an 8 MiB window) is taken whole, and the
// reservation is given back.
func TestZstdBodyIsAccepted(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil)
	status, answer := postEncoded(t, tr.eventsURL(), contentTypeNDJSON, "zstd", compressAs(t, "zstd", ndjsonBody("zstd-window", 3000)))
	require.Equal(t, http.StatusOK, status, answer)
	assert.Equal(t, 3000, sink.LogRecordCount())
	used, peak := tr.r.admit.InUse()
	assert.Zero(t, used)
	assert.GreaterOrEqual(t, peak, int64(8<<20), "the decoder's window was reserved")
}
