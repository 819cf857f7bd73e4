// Package ndjson decodes a batch of audit events, one JSON object per line:
// the receiver's application/x-ndjson intake and the sandboxaudit_encoding
// extension's Unmarshal methods share it, so both accept exactly the same
// input (docs/format.md, "What the intake accepts", through
// auditevent.DecodeOptions).
package ndjson

import (
	"bytes"
	"errors"
	"iter"
	"strconv"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// LineError is why a batch was refused: the first bad line, 1-based,
// counting every line of the body (blank ones too) so that it matches what
// an editor shows.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string {
	return "line " + strconv.Itoa(e.Line) + ": " + e.Err.Error()
}

func (e *LineError) Unwrap() error { return e.Err }

// Redacted is the error without any text from the input: the line, the
// field and the pydantic error type (the message of an *auditevent.FieldError
// may quote a short bad value, such as an unknown op, and its field may be
// an unknown key of the input). Use it where the error
// is logged rather than answered to the client that sent the line.
func (e *LineError) Redacted() string {
	var fe *auditevent.FieldError
	if !errors.As(e.Err, &fe) {
		return "line " + strconv.Itoa(e.Line) + ": invalid event"
	}
	field := fe.Field
	switch {
	case field == "":
		field = "event"
	case !auditevent.IsField(field):
		field = "(unknown field)" // the key is input text
	}
	return "line " + strconv.Itoa(e.Line) + ": " + field + ": " + fe.Type
}

// minEventLine is less than any valid event's line (its session_id and ts
// alone take more), so len(body)/minEventLine bounds the events of a body.
const minEventLine = 64

// maxPrealloc bounds Decode's first reservation (about 1 MiB of events).
const maxPrealloc = 4096

// Decode decodes one event per line, appending to dst. Blank lines
// (whitespace only) are skipped, the last line may lack its "\n", and a
// "\r\n" line end is accepted. A single bad line refuses the whole batch
// with a *LineError: the sender gets one clear answer and nothing of the
// batch is delivered.
func Decode(body []byte, dst []auditevent.Event) ([]auditevent.Event, error) {
	return DecodeWith(body, dst, auditevent.DecodeOptions{})
}

// DecodeWith is Decode with the given defaults (opts).
func DecodeWith(body []byte, dst []auditevent.Event, opts auditevent.DecodeOptions) ([]auditevent.Event, error) {
	if dst == nil {
		// Events are large; growing the slice would copy them repeatedly.
		// Sized by lines, but never past what the body could hold (a body
		// of blank lines once reserved 256 bytes per newline) nor past
		// maxPrealloc: append grows a larger batch.
		n := min(bytes.Count(body, []byte{'\n'}), len(body)/minEventLine, maxPrealloc) + 1
		dst = make([]auditevent.Event, 0, n)
	}
	for line, text := range Lines(body) {
		dst = append(dst, auditevent.Event{})
		if err := opts.DecodeInto(text, &dst[len(dst)-1]); err != nil {
			return dst[:len(dst)-1], &LineError{Line: line, Err: err}
		}
	}
	return dst, nil
}

// CountLines counts the non-blank lines of a body, for the metrics of a
// batch that was refused as a whole.
func CountLines(body []byte) int {
	n := 0
	for range Lines(body) {
		n++
	}
	return n
}

// Lines yields the non-blank lines of body without their "\n", numbered
// from 1 counting every line.
func Lines(body []byte) iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		line := 0
		for text := range bytes.Lines(body) {
			line++
			text = bytes.TrimSuffix(text, []byte{'\n'})
			if isBlank(text) {
				continue
			}
			if !yield(line, text) {
				return
			}
		}
	}
}

// isBlank reports whether a line holds only JSON whitespace.
func isBlank(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r':
		default:
			return false
		}
	}
	return true
}
