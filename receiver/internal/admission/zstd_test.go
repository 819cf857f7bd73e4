package admission

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/zstd"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/heaptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zstdStream is a body of several frames as encoders write them: one of
// known size (its content is its window), a streamed one (an 8 MiB window,
// with a checksum), a skippable frame, and one of RLE blocks. windows are
// the windows they declare, in order.
func zstdStream(t *testing.T) (plain, body []byte, windows []int64) {
	t.Helper()
	var lines bytes.Buffer
	for i := range 20000 {
		fmt.Fprintf(&lines, "{\"n\":%d,\"pad\":\"%x\"}\n", i, i*7919)
	}
	small := []byte("{\"n\":-1}\n")
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	body = enc.EncodeAll(small, nil)
	windows = append(windows, zstd.MinWindowSize)

	var streamed bytes.Buffer
	sw, err := zstd.NewWriter(&streamed, zstd.WithEncoderCRC(true))
	require.NoError(t, err)
	_, err = sw.Write(lines.Bytes())
	require.NoError(t, err)
	require.NoError(t, sw.Close())
	body = append(body, streamed.Bytes()...)
	windows = append(windows, 8<<20)

	body = binary.LittleEndian.AppendUint32(body, 0x184D2A53)
	body = binary.LittleEndian.AppendUint32(body, 5)
	body = append(body, "skip!"...)

	zeros := make([]byte, 300<<10)
	body = append(body, enc.EncodeAll(zeros, nil)...)
	windows = append(windows, int64(len(zeros)))
	require.NoError(t, enc.Close())
	return append(append(append([]byte(nil), small...), lines.Bytes()...), zeros...), body, windows
}

// TestZstdFramesFindEachWindow: the windows of all a body's frames are
// found, however its bytes are cut as they arrive.
func TestZstdFramesFindEachWindow(t *testing.T) {
	_, body, want := zstdStream(t)
	for _, step := range []int{1, 2, 3, 7, 4096, len(body)} {
		var got []int64
		f := zstdFrames{max: 8 << 20, hold: func(n int64) error { got = append(got, n); return nil }}
		for p := body; len(p) > 0; {
			n := min(step, len(p))
			require.NoError(t, f.scan(p[:n]), "step %d", step)
			p = p[n:]
		}
		require.Len(t, got, len(want), "step %d", step)
		for i, w := range want {
			assert.Equal(t, zstdWindowBytes(w), got[i], "step %d, frame %d", step, i)
		}
		assert.False(t, f.inFrame, "step %d: the stream ends between frames", step)
	}
}

// TestZstdReservesEachLargerWindow: a body's decoder reuses its window for
// a frame that fits it: a smaller window after a larger one reserves
// nothing more, and all is given back when the body has been read. The
// body decodes whole.
func TestZstdReservesEachLargerWindow(t *testing.T) {
	plain, body, _ := zstdStream(t)
	c := New(Settings{MaxInflightBytes: 64 << 20, MaxBodyBytes: 20 << 20})
	req := zstdRequest(t, body, 20<<20)
	var rb Body
	require.NoError(t, c.Read(req, &rb))
	assert.Equal(t, plain, rb.Bytes())
	_, peak := c.InUse()
	windows := zstdWindowBytes(zstd.MinWindowSize) + zstdWindowBytes(8<<20)
	assert.GreaterOrEqual(t, peak, windows+zstdDecoderBytes)
	assert.Less(t, peak, windows+zstdDecoderBytes+int64(len(plain))+2*MaxBuffer, "a window that fits the last is reserved again")
	used, _ := c.InUse()
	assert.Equal(t, rb.held, used)
	assert.Less(t, used, int64(8<<20), "the window is held after the body was read")
	rb.Recycle()
	rb.Done()
	used, _ = c.InUse()
	assert.Zero(t, used)
}

// TestZstdWindowOverMax: a frame declaring a window over ZstdMaxWindow is
// refused before the decoder reads it, with an error naming the setting,
// and the body holds nothing.
func TestZstdWindowOverMax(t *testing.T) {
	c := New(Settings{MaxInflightBytes: 64 << 20, MaxBodyBytes: 1 << 20})
	require.Equal(t, int64(8<<20), ZstdMaxWindow(1<<20))
	// No content size, a 16 MiB window, an empty last raw block.
	body := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 14 << 3, 0x01, 0x00, 0x00}
	var rb Body
	err := c.Read(zstdRequest(t, body, 1<<20), &rb)
	we, ok := errors.AsType[*WindowError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, uint64(16<<20), we.Window)
	assert.Contains(t, err.Error(), "Content-Encoding zstd: ")
	assert.Contains(t, err.Error(), "max_request_body_size")
	used, peak := c.InUse()
	assert.Zero(t, used)
	assert.Less(t, peak, int64(1<<20))
}

// zstdRequest is a request whose body is z, as the server hands it to the
// handler: watched beneath the zstd decoder for bodies of at most maxBody.
func zstdRequest(t *testing.T, z []byte, maxBody int64) *http.Request {
	t.Helper()
	return zstdRequestFrom(t, bytes.NewReader(z), maxBody)
}

// zstdRequestFrom is zstdRequest with its compressed body read from r.
func zstdRequestFrom(t *testing.T, r io.Reader, maxBody int64) *http.Request {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v1/events", r)
	req.Header.Set("Content-Encoding", "zstd")
	req = TrackEncoding(req)
	dec, err := Zstd(maxBody)(req.Body)
	require.NoError(t, err)
	req.Body = dec
	return req
}

// TestZstdContentOverMax: a single-segment frame's content size is its
// window; over ZstdMaxWindow it is refused, and the error says which.
func TestZstdContentOverMax(t *testing.T) {
	c := New(Settings{MaxInflightBytes: 64 << 20, MaxBodyBytes: 1 << 20})
	// Single segment, an 8-byte content size of 1 TiB, an empty last raw block.
	body := binary.LittleEndian.AppendUint64([]byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0}, 1<<40)
	body = append(body, 0x01, 0x00, 0x00)
	var rb Body
	err := c.Read(zstdRequest(t, body, 1<<20), &rb)
	we, ok := errors.AsType[*WindowError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, uint64(1<<40), we.Window)
	assert.Contains(t, err.Error(), "content size")
	used, _ := c.InUse()
	assert.Zero(t, used)
}

// TestZstdLongestFrameHeader: a header with a window, a 4-byte dictionary
// id and an 8-byte content size, 18 bytes, is followed whole, however it
// arrives.
func TestZstdLongestFrameHeader(t *testing.T) {
	head := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xc3, 13 << 3, 1, 2, 3, 4}
	head = binary.LittleEndian.AppendUint64(head, 1000)
	require.Len(t, head, zstdHeaderMax)
	body := append(head, 0x01, 0x00, 0x00) // an empty last raw block
	var got []int64
	f := zstdFrames{max: 8 << 20, hold: func(n int64) error { got = append(got, n); return nil }}
	for i := range body {
		require.NoError(t, f.scan(body[i:i+1]))
	}
	assert.Equal(t, []int64{zstdWindowBytes(8 << 20)}, got)
	assert.False(t, f.inFrame)
}

// TestZstdNotAFrame: bytes that are not a zstd frame, first or after one,
// are refused as the decoder would: a frame past them would go unreserved.
func TestZstdNotAFrame(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	good := enc.EncodeAll([]byte("{}\n"), nil)
	require.NoError(t, enc.Close())
	for name, body := range map[string][]byte{
		"not zstd":           []byte("{\"plain\":true}\n"),
		"after a frame":      append(bytes.Clone(good), "garbage!"...),
		"reserved block":     {0x28, 0xb5, 0x2f, 0xfd, 0x00, 10 << 3, 0x07, 0x00, 0x00},
		"reserved frame bit": {0x28, 0xb5, 0x2f, 0xfd, 0x08, 10 << 3, 0x01, 0x00, 0x00},
	} {
		f := zstdFrames{max: 8 << 20}
		_, ok := errors.AsType[*DecodeError](f.scan(body))
		assert.True(t, ok, name)
	}
}

// TestZstdWindowOverBudget: a window the budget cannot cover is
// ErrOverBudget (503), not a decoding error.
func TestZstdWindowOverBudget(t *testing.T) {
	c := New(Settings{MaxInflightBytes: 4 << 20, MaxBodyBytes: 1 << 20})
	body := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 13 << 3, 0x01, 0x00, 0x00}
	var rb Body
	err := c.Read(zstdRequest(t, body, 1<<20), &rb)
	require.ErrorIs(t, err, ErrOverBudget)
	used, _ := c.InUse()
	assert.Zero(t, used)
}

// TestZstdGrowingWindowsAddUp: a decoder allocates a new window for each
// frame whose window is larger than the last, and the last one is garbage,
// not free. A body of empty frames whose windows grow from 1 KiB to 8 MiB
// makes about 90 MiB of them: each is reserved, so it does not fit a
// 32 MiB budget, though its largest window does.
func TestZstdGrowingWindowsAddUp(t *testing.T) {
	var body []byte
	for wd := byte(0); wd <= 13<<3; wd++ {
		// No content size, the window; an empty last raw block.
		body = append(body, 0x28, 0xb5, 0x2f, 0xfd, 0x00, wd, 0x01, 0x00, 0x00)
	}
	c := New(Settings{MaxInflightBytes: 32 << 20, MaxBodyBytes: 1 << 20})
	var rb Body
	err := c.Read(zstdRequest(t, body, 1<<20), &rb)
	require.ErrorIs(t, err, ErrOverBudget)
	used, peak := c.InUse()
	assert.Zero(t, used)
	assert.Greater(t, peak, int64(24<<20))
}

// TestZstdWindowIsGarbageOnceRead: Read gives the windows' reservation
// back once the body is read, while the request goes on (its events are
// decoded, wait for the pipeline, are answered). So the window must be
// garbage by then, not held by the closed decoder the request still
// refers to.
func TestZstdWindowIsGarbageOnceRead(t *testing.T) {
	// No content size, an 8 MiB window; a last raw block of 1000 bytes.
	body := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 13 << 3, 0x41, 0x1f, 0x00}
	body = append(body, bytes.Repeat([]byte{'\n'}, 1000)...)
	c := New(Settings{MaxInflightBytes: 64 << 20, MaxBodyBytes: 1 << 20})
	heap := heaptest.Start()
	req := zstdRequest(t, body, 1<<20)
	var rb Body
	require.NoError(t, c.Read(req, &rb))
	require.Len(t, rb.Bytes(), 1000)
	rb.Recycle()
	retained := heap.Stop().Retained
	runtime.KeepAlive(req)
	assert.Less(t, retained, int64(4<<20), "the request still holds the decoder's 8 MiB window, unreserved")
	rb.Done()
	used, _ := c.InUse()
	assert.Zero(t, used)
}

// TestZstdBodyCutBetweenFramesIsCutShort: a transfer that fails where a
// frame ends (the client gone between two frames) is a body cut short,
// though the decoder takes it for the end of the stream; the windows
// reserved are given back.
func TestZstdBodyCutBetweenFramesIsCutShort(t *testing.T) {
	_, body, _ := zstdStream(t)
	for name, err := range map[string]error{"cut short": io.ErrUnexpectedEOF, "cancelled": context.Canceled} {
		c := New(Settings{MaxInflightBytes: 64 << 20, MaxBodyBytes: 20 << 20})
		raw := io.MultiReader(bytes.NewReader(body), iotest.ErrReader(err))
		var rb Body
		require.ErrorIs(t, c.Read(zstdRequestFrom(t, raw, 20<<20), &rb), err, name)
		used, peak := c.InUse()
		assert.Zero(t, used, name)
		assert.Greater(t, peak, int64(8<<20), "%s: the windows were reserved", name)
	}
}
