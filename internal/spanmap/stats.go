package spanmap

import (
	"errors"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// Stats counts what a mapping call did, for the caller's telemetry and logs.
type Stats struct {
	// Spans is the number of spans looked at.
	Spans int
	// Events is the number of events appended.
	Events int
	// NotSandbox counts spans that are not sandbox spans (skipped, no error).
	NotSandbox int
	// Invalid counts sandbox spans skipped because of a bad attribute;
	// FirstInvalid and LastInvalid are the reasons (*AttrError) of the first
	// and the last, for logging.
	Invalid int
	// TooLong counts the invalid spans whose line would pass the mapper's
	// line limit.
	TooLong      int
	FirstInvalid error
	LastInvalid  error
	// Ignored counts optional attributes that were malformed and left out of
	// an event that was still produced, rather than cost the whole audit
	// record; LastIgnored says which and why. They are:
	//   - sandbox.event.start_id / finish_id that is not a UUID string: the
	//     id is derived as if the attribute were absent;
	//   - sandbox.error.code that is not a reference ErrorCode (a code from
	//     a newer SDK): error_code becomes null, the other error fields stay;
	//   - sandbox.exec.stdout_bytes / stderr_bytes (and the
	//     sandbox.exec.stdout / stderr strings) of the wrong type or with
	//     invalid base64: that output is dropped, and malformed raw output
	//     takes the stream's text along. Exec output reaches a file
	//     only when the payload policy asks for it; losing the operation's
	//     record over it would be worse.
	Ignored     int
	LastIgnored error
}

func (s *Stats) invalid(err error) {
	if s.Invalid == 0 {
		s.FirstInvalid = err
	}
	s.LastInvalid = err
	s.Invalid++
	if _, ok := errors.AsType[*auditevent.TooLongError](err); ok {
		s.TooLong++
	}
}

func (s *Stats) ignored(err error) {
	s.LastIgnored = err
	s.Ignored++
}
