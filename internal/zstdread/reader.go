package zstdread

import (
	"errors"
	"io"

	"github.com/klauspost/compress/zstd"
)

// DamagedError is a read that failed in the compressed stream itself:
// the bytes under it were read, and they do not decode to their end.
type DamagedError struct {
	Err error // the decoder's error
}

func (e *DamagedError) Error() string {
	return "the compressed segment cannot be read to its end (" + e.Err.Error() + "): cut short or damaged"
}

func (e *DamagedError) Unwrap() error { return e.Err }

// IsDamaged reports whether err is, or wraps, a DamagedError.
func IsDamaged(err error) bool {
	var d *DamagedError
	return errors.As(err, &d)
}

// Reader decompresses a zstd stream. A read error is either the error
// reading the source gave, unchanged, or a *DamagedError.
type Reader struct {
	dec *zstd.Decoder
	src *sourceTap
}

// maxWindow bounds the window a frame may ask for, which the decoder
// allocates up front (the format allows 512 MiB). The file sink writes
// 1 MiB windows; `zstd` writes at most 8 MiB below --ultra and --long.
const maxWindow = 64 << 20

// NewReader reads the zstd stream in r. The decoder runs synchronously
// (concurrency 1, set here), so an error is told apart at the read that
// met it. A frame asking for a window over 64 MiB fails a read as damaged
// unless opts allow more.
func NewReader(r io.Reader, opts ...zstd.DOption) (*Reader, error) {
	src := &sourceTap{r: r}
	all := append([]zstd.DOption{zstd.WithDecoderMaxWindow(maxWindow)}, opts...)
	dec, err := zstd.NewReader(src, append(all, zstd.WithDecoderConcurrency(1))...)
	if err != nil {
		if src.err != nil {
			return nil, src.err
		}
		return nil, err
	}
	return &Reader{dec: dec, src: src}, nil
}

func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.dec.Read(p)
	if err == nil {
		return n, nil
	}
	// The decoder may pass a source error on, wrap it, turn it into an
	// unexpected EOF, or (an unexpected EOF where a frame could end) into
	// the stream's end: the source's own error says what happened.
	if r.src.err != nil {
		return n, r.src.err
	}
	if errors.Is(err, io.EOF) {
		return n, err
	}
	return n, &DamagedError{Err: err}
}

// Close releases the decoder; the source is the caller's to close.
func (r *Reader) Close() { r.dec.Close() }

// sourceTap keeps the first error other than io.EOF that reading the
// source gave.
type sourceTap struct {
	r   io.Reader
	err error
}

func (t *sourceTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && t.err == nil {
		t.err = err
	}
	return n, err
}
