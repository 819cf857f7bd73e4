package spanmap

import (
	"errors"
	"fmt"
)

// ErrNotSandboxSpan marks a span without the sandbox.operation and
// sandbox.session.id attributes. It is not a failure: such spans are skipped
// and counted.
var ErrNotSandboxSpan = errors.New("not a sandbox span")

// AttrError is why a sandbox span could not be mapped: Attr names the span
// attribute (or "span" for the span as a whole) and Msg says what is wrong.
// Msg never quotes a value (not even an op or an error code: a producer may
// put anything there), so it is safe to log and to answer to a client.
type AttrError struct {
	Attr string
	Msg  string
	Err  error // underlying parse error, if any
}

func (e *AttrError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("sandbox span attribute %q: %s: %v", e.Attr, e.Msg, e.Err)
	}
	return fmt.Sprintf("sandbox span attribute %q: %s", e.Attr, e.Msg)
}

func (e *AttrError) Unwrap() error { return e.Err }

func attrErr(attr, msg string, err error) *AttrError {
	return &AttrError{Attr: attr, Msg: msg, Err: err}
}
