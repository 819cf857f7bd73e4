package httpsink

import (
	"compress/flate"
	"compress/gzip"
	"errors"
)

// undecodable reports whether err is the client failing to decompress a
// body that arrived whole (gzip is the one encoding Go's client undoes): a
// 2xx answered in full is an acknowledgement, and resending it every
// round only duplicated the lines. A body cut short mid-stream is
// io.ErrUnexpectedEOF or a network error, still not trusted.
func undecodable(err error) bool {
	var corrupt flate.CorruptInputError
	return errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) || errors.As(err, &corrupt)
}
