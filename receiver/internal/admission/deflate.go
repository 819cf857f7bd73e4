package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"bufio"
	"compress/zlib"
	"errors"
	"io"
)

// ErrAfterStream is a compressed body with bytes after its stream's end.
var ErrAfterStream = errors.New("data after the end of the compressed stream")

// Deflate is the decoder of Content-Encoding deflate (and zlib), which
// confighttp's lacks one check of: a zlib stream ends at its checksum, and
// whatever follows it in the body, a second stream's events say, would be
// dropped unseen while the request is answered 200. Here it is
// ErrAfterStream.
func Deflate(body io.ReadCloser) (io.ReadCloser, error) {
	// A bufio.Reader is a flate.Reader, so zlib reads through this one
	// and what it has not consumed stays here to be looked at.
	br := bufio.NewReader(body)
	zr, err := zlib.NewReader(br)
	if err != nil {
		return nil, err
	}
	return &deflated{ReadCloser: zr, rest: br}, nil
}

type deflated struct {
	io.ReadCloser // the zlib reader
	rest          *bufio.Reader
}

func (d *deflated) Read(p []byte) (int, error) {
	n, err := d.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		switch _, perr := d.rest.Peek(1); {
		case perr == nil:
			return n, ErrAfterStream
		case !errors.Is(perr, io.EOF):
			return n, perr
		}
	}
	return n, err
}
