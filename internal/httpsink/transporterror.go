package httpsink

import (
	"compress/flate"
	"compress/gzip"
	"errors"
	"net/url"
	"strings"
)

// TransportError returns err, an http.Client's failure to get a response,
// fit for logs and errors: without the *url.Error's URL (credentials,
// query) and without what the peer sent (see transportError); secrets are
// what it must not echo (Secrets).
func TransportError(err error, secrets []string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &transportError{cause: err, msg: safeText(err.Error(), secrets)}
}

// Secrets lists what must never be shown of a client posting to endpoint
// with values (header values, a proxy's credentials): each value, each of
// its words, and the endpoint's password and query values.
func Secrets(endpoint string, values []string) []string { return secretsOf(endpoint, values) }

// transportError is a request's failure told without what the peer sent.
// net/http quotes response bytes in its errors (a malformed status line or
// header line, a Location it cannot parse), always with %q, and an
// endpoint, or a service that is not one, may echo our Authorization header
// or the URL's query there: the message stops before the first quote. A
// proxy's refusal of CONNECT is its reason phrase, unquoted; a message
// that still echoes a secret is withheld whole. The cause stays reachable,
// for Timeout and errors.Is.
type transportError struct {
	cause error
	msg   string // safeText of the cause's, worked out once
}

func (e *transportError) Error() string { return e.msg }

// safeText is msg cut before its first quote, or withheld whole when what
// is left still echoes one of secrets.
func safeText(msg string, secrets []string) string {
	if i := strings.IndexByte(msg, '"'); i >= 0 {
		msg = strings.TrimRight(msg[:i], ": ") + " (the response's bytes it quoted are withheld)"
	}
	if red := redact([]byte(msg), secrets); string(red) != msg || echoesSecret(red, secrets) {
		return "the transport's error text is withheld: it echoes a configured secret"
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
