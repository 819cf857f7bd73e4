package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// zstdMinMaxWindow is the window an encoder that does not know the size of
// what it compresses declares (klauspost/compress's default, as Go OTLP
// exporters send it): frames of it decode whatever max_request_body_size
// is, as with confighttp's own decoder.
const zstdMinMaxWindow = 8 << 20

// ZstdMaxWindow is the largest window a zstd frame may declare in a body of
// at most maxBody bytes: history past the body's length is never read, but
// encoders declare their default whatever they compress.
func ZstdMaxWindow(maxBody int64) int64 {
	return min(max(maxBody, zstdMinMaxWindow), zstd.MaxWindowSize)
}

// zstdWindowBytes is what a zstd decoder allocates, whole, when it reads
// the first block of a frame declaring window: a ring of the window and
// room for two more blocks with their copies' overrun.
func zstdWindowBytes(window int64) int64 {
	return window + 2*(min(window, 128<<10)+16)
}

// Zstd returns the decoder of Content-Encoding zstd for bodies of at most
// maxBody bytes. Unlike confighttp's, it is not pooled: a pooled decoder
// keeps the window of its last frame, which no request holds budget for.
func Zstd(maxBody int64) func(io.ReadCloser) (io.ReadCloser, error) {
	window := uint64(ZstdMaxWindow(maxBody))
	return func(body io.ReadCloser) (io.ReadCloser, error) {
		// One goroutine: the body's reads, and so the reservations that
		// watching them makes (see zstdFrames), happen in the reader's.
		dec, err := zstd.NewReader(body, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(window))
		if err != nil {
			return nil, err
		}
		return &zstdBody{dec}, nil
	}
}

// zstdBody is a zstd decoder as a body; closing it frees the decoder (the
// server closes the body beneath).
type zstdBody struct{ dec *zstd.Decoder }

func (z *zstdBody) Read(p []byte) (int, error) {
	if z.dec == nil {
		return 0, zstd.ErrDecoderClosed
	}
	return z.dec.Read(p)
}

// Close drops the decoder as well: a closed one keeps its last window, and
// the request, which still refers to its body, lives on past the window's
// reservation (see Controller.Read).
func (z *zstdBody) Close() error {
	if z.dec != nil {
		z.dec.Close()
		z.dec = nil
	}
	return nil
}

// WindowError is a zstd frame declaring a window over ZstdMaxWindow.
type WindowError struct {
	Window uint64
	Max    int64
	// Single: the frame is single-segment, its content size its window.
	Single bool
}

func (e *WindowError) Error() string {
	what := "a window"
	if e.Single {
		what = "a content size (its window, in a single-segment frame)"
	}
	return fmt.Sprintf("a frame declares %s of %d bytes, over the %d-byte window this receiver decodes with "+
		"(max_request_body_size, at least 8 MiB); compress with a smaller window", what, e.Window, e.Max)
}

// zstdHeaderMax is the longest frame header: magic, descriptor, window,
// a 4-byte dictionary id and an 8-byte content size.
const zstdHeaderMax = 4 + 1 + 1 + 4 + 8

// zstdFrames follows a zstd stream's framing as its bytes go to the
// decoder, so that each frame's window is reserved, or refused, before the
// decoder reads the frame: it allocates all of the window the frame
// declares, whatever the frame holds, with its first block. Only the
// headers are read, the frame's and its blocks', to find the next frame;
// the decoder checks the rest. What is not zstd is refused here, as the
// decoder would: a frame past it would go unreserved.
type zstdFrames struct {
	// hold makes the reservation for the decoder's window the given bytes
	// (nil: nothing is reserved); max is the largest window taken.
	hold func(int64) error
	max  int64

	head     [zstdHeaderMax]byte // a frame's or a block's header arriving
	n        int                 // of head
	skip     int64               // bytes to pass before the next header
	inFrame  bool                // the next header is a block's
	checksum bool                // the frame ends with a 4-byte checksum
}

// scan follows p, the next bytes of the stream; an error refuses the body
// before the decoder gets p.
func (f *zstdFrames) scan(p []byte) error {
	for len(p) > 0 {
		if f.skip > 0 {
			n := min(f.skip, int64(len(p)))
			f.skip -= n
			p = p[n:]
			continue
		}
		var err error
		if f.inFrame {
			p, err = f.block(p)
		} else {
			p, err = f.frame(p)
		}
		if err != nil {
			return decodeError("zstd", err) // ErrOverBudget as it is
		}
	}
	return nil
}

// errReservedBlock is a block of the type zstd reserves.
var errReservedBlock = errors.New("a block of the reserved type")

// block takes a block's 3-byte header from p, and returns the rest of p.
func (f *zstdFrames) block(p []byte) ([]byte, error) {
	c := copy(f.head[f.n:3], p)
	f.n += c
	if f.n < 3 {
		return p[c:], nil
	}
	f.n = 0
	h := uint32(f.head[0]) | uint32(f.head[1])<<8 | uint32(f.head[2])<<16
	switch h >> 1 & 3 {
	case 0, 2: // raw, compressed
		f.skip = int64(h >> 3)
	case 1: // RLE: one byte, repeated
		f.skip = 1
	default:
		return nil, errReservedBlock
	}
	if h&1 != 0 { // the frame's last
		f.inFrame = false
		if f.checksum {
			f.skip += 4
		}
	}
	return p[c:], nil
}

// frame takes a frame's header from p, reserving its window, and returns
// the rest of p.
func (f *zstdFrames) frame(p []byte) ([]byte, error) {
	c := copy(f.head[f.n:], p)
	f.n += c
	var h zstd.Header
	switch err := h.Decode(f.head[:f.n]); {
	case errors.Is(err, io.ErrUnexpectedEOF) && f.n < len(f.head):
		return p[c:], nil
	case err != nil:
		return nil, err
	}
	// The header ended within the bytes just copied: the rest of them
	// follow it.
	rest := p[c-(f.n-h.HeaderSize):]
	f.n = 0
	if h.Skippable {
		f.skip = int64(h.SkippableSize)
		return rest, nil
	}
	window := h.WindowSize
	if h.SingleSegment { // the frame's content is its window
		window = max(h.FrameContentSize, zstd.MinWindowSize)
	}
	if window > uint64(f.max) {
		return nil, &WindowError{Window: window, Max: f.max, Single: h.SingleSegment}
	}
	if f.hold != nil {
		if err := f.hold(zstdWindowBytes(int64(window))); err != nil {
			return nil, err
		}
	}
	f.inFrame, f.checksum = true, h.HasCheckSum
	return rest, nil
}
