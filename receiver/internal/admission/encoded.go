package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
)

// DecodeError is a compressed body whose bytes arrived but do not decode
// as its Content-Encoding says.
type DecodeError struct {
	Encoding string // one of knownEncodings, or "" when the header said another
	Err      error
}

func (e *DecodeError) Error() string {
	if e.Encoding == "" {
		return "cannot decompress it (Content-Encoding): " + e.Err.Error()
	}
	return "cannot decompress it as Content-Encoding " + e.Encoding + ": " + e.Err.Error()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// knownEncodings are the codings a message may name: the header is the
// client's, and only a value from this list is repeated back.
var knownEncodings = [...]string{"gzip", "deflate", "zlib", "zstd", "lz4", "snappy", "x-snappy-framed"}

// encodedBody is a compressed body as it arrives, beneath its decoder: it
// keeps the first error reading it, so that an error of the decoded body
// can be laid at the transfer's door (cut short, too slow) or the
// decoder's.
type encodedBody struct {
	io.ReadCloser
	encoding string
	// lead is how far the bytes that arrived may run ahead of those
	// decoded (0: unbounded); see streamLead.
	lead int64
	// decoder is what the body's decoder holds apart from its buffers
	// (see decoderBytes).
	decoder int64
	// frames follows a zstd body's frames for their windows, once the
	// body is read (see watchZstd); nil before and for other codings.
	frames *zstdFrames

	mu           sync.Mutex // a decoder may read from a goroutine of its own
	err          error
	raw, decoded int64
}

// streamLead is how far what arrives of a gzip, deflate or zlib body may
// run ahead of what it decoded to: a stored block (64 KiB), the decoder's
// read-ahead (4 KiB) and headers, beside a quarter of what it decoded to
// (fixed Huffman codes stretch random bytes by an eighth). Such a body
// holds no budget for bytes that decode to nothing (empty blocks), so
// without it a client could hold every connection, at min_body_rate, with
// bodies holding no budget. The block decoders (zstd, lz4,
// x-snappy-framed) reserve their blocks instead (decoderBytes).
const streamLead = 64<<10 + 4<<10 + 512

// errDecodesToLittle: see streamLead.
type errDecodesToLittle struct{ raw, decoded int64 }

func (e *errDecodesToLittle) Error() string {
	return fmt.Sprintf("%d bytes arrived and decode to %d; a body must decode to about as much as arrives", e.raw, e.decoded)
}

func (b *encodedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.frames != nil {
		if ferr := b.frames.scan(p[:n]); ferr != nil {
			n, err = 0, ferr // the decoder gets none of a frame refused
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.raw += int64(n)
	if err == nil && b.lead > 0 && b.raw-b.decoded-b.decoded/4 > b.lead {
		err = &DecodeError{Encoding: b.encoding, Err: &errDecodesToLittle{raw: b.raw, decoded: b.decoded}}
	}
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}

// addDecoded counts n bytes decoded from the body.
func (b *encodedBody) addDecoded(n int) {
	b.mu.Lock()
	b.decoded += int64(n)
	b.mu.Unlock()
}

// blame is the error to answer for err, an error reading the decoded
// body: the transfer's own error if the compressed bytes failed to
// arrive, err itself if the decoded body is over max_request_body_size,
// else a DecodeError.
func (b *encodedBody) blame(err error) error {
	if raw := b.failed(); raw != nil {
		return raw
	}
	return decodeError(b.encoding, err)
}

// failed is the first error reading the compressed bytes, nil if none.
func (b *encodedBody) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// decodeError wraps err, an error of a decoder, in a DecodeError, unless
// it is a bound's (the budget's, max_request_body_size's).
func decodeError(encoding string, err error) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok || errors.Is(err, ErrOverBudget) {
		return err
	}
	return &DecodeError{Encoding: encoding, Err: err}
}

type encodedKey struct{}

// TrackEncoding returns req with its body, if compressed, watched beneath
// the decoder (for Read and DecodeFailure). It must run before the
// decoder replaces the body and drops the Content-Encoding header.
func TrackEncoding(req *http.Request) *http.Request {
	if !compressed(req) || req.Body == nil || req.Body == http.NoBody {
		return req
	}
	b := &encodedBody{ReadCloser: req.Body, encoding: known(req.Header.Get("Content-Encoding"))}
	switch b.encoding {
	case "gzip", "deflate", "zlib":
		b.lead = streamLead
	case "lz4":
		b.decoder = lz4DecoderBytes
	case "zstd":
		b.decoder = zstdDecoderBytes
	case "x-snappy-framed":
		b.decoder = framedSnappyDecoderBytes
	}
	req = req.WithContext(context.WithValue(req.Context(), encodedKey{}, b))
	req.Body = b
	return req
}

// DecodeFailure is the error to answer for err, the error of a decoder
// that could not start on req's body (see TrackEncoding; an empty body is
// not watched, and its error is the decoder's).
func DecodeFailure(req *http.Request, err error) error {
	if b, _ := req.Context().Value(encodedKey{}).(*encodedBody); b != nil {
		return b.blame(err)
	}
	return decodeError(known(req.Header.Get("Content-Encoding")), err)
}

// decodedBody is the decoded body of an encodedBody: its errors are
// blamed on what caused them.
type decodedBody struct {
	io.Reader
	enc *encodedBody
}

func (d decodedBody) Read(p []byte) (int, error) {
	n, err := d.Reader.Read(p)
	d.enc.addDecoded(n)
	switch {
	case errors.Is(err, io.EOF):
		// A zstd decoder takes a transfer cut where a frame ends (its
		// input's unexpected EOF) for the end of its stream.
		if raw := d.enc.failed(); raw != nil {
			err = raw
		}
	case err != nil:
		err = d.enc.blame(err)
	}
	return n, err
}

// decodedReader is req's body, its errors blamed as decodedBody's when the
// body is compressed and watched.
func decodedReader(req *http.Request) io.Reader {
	if b, _ := req.Context().Value(encodedKey{}).(*encodedBody); b != nil {
		return decodedBody{Reader: req.Body, enc: b}
	}
	return req.Body
}

// lz4DecoderBytes is what an lz4 decoder allocates before its first
// decoded byte: a block buffer and a buffer for a compressed block, at most
// 8 MiB each (a legacy frame's blocks; a frame's are at most 4 MiB), the
// compressed one with its bound of 1/255 over plus 16.
const lz4DecoderBytes = 8<<20 + 8<<20 + 8<<20/255 + 16

// zstdDecoderBytes is what a zstd decoder fills before the body gets a
// byte of a block, beside its window (reserved by frame, see zstdFrames):
// the compressed block, its literals and its sequences, 128 KiB each, and
// as much again for its tables.
const zstdDecoderBytes = 4 * 128 << 10

// framedSnappyDecoderBytes is what an x-snappy-framed decoder fills before
// the body gets a byte of a chunk: the chunk, up to the bound of a 64 KiB
// block compressed plus its checksum, and the 64 KiB it decodes to.
const framedSnappyDecoderBytes = 32 + 64<<10 + 64<<10/6 + 4 + 64<<10

// watchZstd has the windows of req's body's frames, if zstd, reserved by
// hold before the decoder reads them, and refused over max.
func watchZstd(req *http.Request, hold func(int64) error, max int64) {
	if b, _ := req.Context().Value(encodedKey{}).(*encodedBody); b != nil && b.encoding == "zstd" {
		b.frames = &zstdFrames{hold: hold, max: max}
	}
}

// decoderBytes is the memory the decoder of req's body holds apart from
// the body's buffers, reserved with them: blocks the decoder reads whole
// before it hands on any byte of them. gzip, deflate and zlib stream (a
// 32 KiB window); a snappy block is reserved as it is inflated (see Read).
func decoderBytes(req *http.Request) int64 {
	if b, _ := req.Context().Value(encodedKey{}).(*encodedBody); b != nil {
		return b.decoder
	}
	return 0
}

func known(encoding string) string {
	if slices.Contains(knownEncodings[:], encoding) {
		return encoding
	}
	return ""
}
