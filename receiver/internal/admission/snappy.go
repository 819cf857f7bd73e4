package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/golang/snappy"
)

// EncodingSnappy is the Content-Encoding whose bodies Read inflates itself
// (Settings.Snappy): a snappy block inflates only once all of it arrived,
// so the compressed bytes are read like any body, within the budget and
// paced, and the inflated size, which the block states up front, is
// reserved before it is allocated.
const EncodingSnappy = "snappy"

// snappyFraming starts every framed snappy stream, which clients also send
// as "snappy".
const snappyFraming = "\xff\x06\x00\x00sNaPpY"

// inflateSnappy replaces rb's compressed bytes by what they inflate to.
func (rb *Body) inflateSnappy() error {
	if bytes.HasPrefix(rb.b, []byte(snappyFraming)) {
		return rb.replace(func(nb *Body) error {
			return nb.readFrom(snappyFramed{snappy.NewReader(bytes.NewReader(rb.b))})
		})
	}
	n, err := snappy.DecodedLen(rb.b)
	if err != nil {
		return rb.fail(&DecodeError{Encoding: EncodingSnappy, Err: err})
	}
	if int64(n) > rb.c.settings.MaxBodyBytes {
		return rb.fail(&http.MaxBytesError{Limit: rb.c.settings.MaxBodyBytes})
	}
	return rb.replace(func(nb *Body) error {
		if nb.small && int64(n) > rb.c.settings.SmallBodyBytes {
			if err := nb.promote(); err != nil {
				return err
			}
		}
		if err := nb.hold(int64(n)); err != nil {
			return err
		}
		out, err := snappy.Decode(make([]byte, n), rb.b)
		if err != nil {
			return &DecodeError{Encoding: EncodingSnappy, Err: err}
		}
		nb.b = out
		return nil
	})
}

// replace fills a body of the same client and class with inflate, then
// gives rb's buffers and reservation up and takes the new body's place.
func (rb *Body) replace(inflate func(nb *Body) error) error {
	nb := Body{c: rb.c, pool: rb.pool, addr: rb.addr, small: rb.small}
	err := inflate(&nb)
	rb.Recycle()
	rb.Done()
	if err != nil {
		nb.Recycle()
		nb.Done()
		return err
	}
	*rb = nb
	return nil
}

// snappyFramed reads a framed snappy stream, its errors DecodeErrors.
type snappyFramed struct{ r io.Reader }

func (f snappyFramed) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = decodeError(EncodingSnappy, err)
	}
	return n, err
}
