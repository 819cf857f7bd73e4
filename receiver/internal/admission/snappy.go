package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"bytes"
	"fmt"
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
var snappyFraming = []byte("\xff\x06\x00\x00sNaPpY")

// inflateSnappy replaces rb's compressed bytes by what they inflate to.
func (rb *Body) inflateSnappy() error {
	if bytes.HasPrefix(rb.b, snappyFraming) {
		return rb.replace(func(nb *Body) error {
			return nb.readFrom(snappy.NewReader(bytes.NewReader(rb.b)))
		})
	}
	n, err := snappy.DecodedLen(rb.b)
	if err != nil {
		return rb.fail(fmt.Errorf("Content-Encoding: %w", err))
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
			return fmt.Errorf("Content-Encoding: %w", err)
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
