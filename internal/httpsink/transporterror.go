package httpsink

import "strings"

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
