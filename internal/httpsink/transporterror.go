package httpsink

import (
	"compress/flate"
	"compress/gzip"
	"errors"
	"strings"
)

// transportError is a request's failure told without what the endpoint
// sent. net/http quotes response bytes in its errors (a malformed status
// line or header line, a Location it cannot parse), always with %q, and an
// endpoint, or a service that is not one, may echo our Authorization header
// or the URL's query there: the message stops before the first quote. The
// cause stays reachable, for Timeout and errors.Is.
type transportError struct{ cause error }

func (e *transportError) Error() string {
	msg := e.cause.Error()
	if i := strings.IndexByte(msg, '"'); i >= 0 {
		return strings.TrimRight(msg[:i], ": ") + " (the response's bytes it quoted are withheld)"
	}
	return msg
}

func (e *transportError) Unwrap() error { return e.cause }

// undecodable reports whether err is the client failing to decompress a
// body that arrived whole (gzip is the one encoding Go's client undoes): a
// 2xx answered in full is an acknowledgement, and resending it every
// round only duplicated the lines. A body cut short mid-stream is
// io.ErrUnexpectedEOF or a network error, still not trusted.
func undecodable(err error) bool {
	var corrupt flate.CorruptInputError
	return errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) || errors.As(err, &corrupt)
}
