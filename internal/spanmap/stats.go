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
	// an event that was still produced (see the package documentation);
	// LastIgnored says which and why.
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
