package secretlog

import (
	"errors"
	"net/url"
	"strings"
)

// TransportError returns err, an http.Client's failure to get a response,
// fit for logs and errors: without the *url.Error's URL (credentials,
// query) and without what the peer sent (see TransportFailure); secrets are
// what it must not echo (see Secrets).
func TransportError(err error, secrets []string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &TransportFailure{cause: err, msg: safeText(err.Error(), secrets)}
}

// TransportFailure is a request's failure told without what the peer sent.
// net/http quotes response bytes in its errors (a malformed status line or
// header line, a Location it cannot parse), always with %q, and an
// endpoint, or a service that is not one, may echo our Authorization header
// or the URL's query there: the message stops before the first quote. A
// proxy's refusal of CONNECT is its reason phrase, unquoted; a message
// that still echoes a secret is withheld whole. The cause stays reachable,
// for Timeout and errors.Is.
type TransportFailure struct {
	cause error
	msg   string // safeText of the cause's, worked out once
}

func (e *TransportFailure) Error() string { return e.msg }

// safeText is msg cut before its first quote, or withheld whole when what
// is left still echoes one of secrets.
func safeText(msg string, secrets []string) string {
	if i := strings.IndexByte(msg, '"'); i >= 0 {
		msg = strings.TrimRight(msg[:i], ": ") + " (the response's bytes it quoted are withheld)"
	}
	if red := Redact([]byte(msg), secrets); string(red) != msg || Echoes(red, secrets) {
		return "the transport's error text is withheld: it echoes a configured secret"
	}
	return msg
}

func (e *TransportFailure) Unwrap() error { return e.cause }
