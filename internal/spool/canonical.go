package spool

import (
	"bytes"
	"errors"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// errNotCanonical is a line that decodes as an event but is not the line
// the encoder writes for it: bytes were changed, added or reordered.
var errNotCanonical = errors.New("not in canonical form")

// CanonicalEvent is the Options.Check of a spool of audit events: line,
// with its newline, must be exactly the canonical line of the event it
// decodes to. What it returns never quotes the line (see Damage.Reason).
func CanonicalEvent(line []byte) error {
	e, err := auditevent.Decode(line)
	if err != nil {
		return errors.New(reasonOf(err))
	}
	if !bytes.Equal(auditevent.AppendLine(make([]byte, 0, len(line)), &e), line) {
		return errNotCanonical
	}
	return nil
}

// reasonOf says why an event did not decode without its text, which may
// quote the line: the field's name when it is one of the event's fields.
func reasonOf(err error) string {
	var fe *auditevent.FieldError
	if errors.As(err, &fe) && auditevent.IsField(fe.Field) {
		return "not a valid audit event (field " + fe.Field + ")"
	}
	return "not a valid audit event"
}
