// Package tornjoin finds the whole event line that follows a torn piece in
// one physical line. A writer killed mid-line, or after an event's bytes
// but before its newline, leaves a piece without its newline; a writer
// that appends without looking at the last byte (the Python
// JsonlOutboxSink) then writes its whole line after it, and the two read
// as one line that is not an event (docs/guarantees.md, "The file"). The
// bytes of the second line are all there, and those of the first when it
// lost only its newline: readers recover them.
package tornjoin

import (
	"bytes"
	"iter"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// lineStart is how every canonical event line begins: keys are sorted, so
// data comes first, and it is always an object.
const lineStart = `{"data":{`

// A Join is a line that joins two writes: a piece a writer left without
// its newline, then a whole event line another writer appended.
type Join struct {
	// Piece is the piece's length: the whole line is text[Piece:].
	Piece int
	// Event is the whole line's event, decoded once by Find's check.
	Event auditevent.Event
	// PieceEvent is the piece's event when the piece is itself a whole
	// canonical event line that lost only its newline (its writer was
	// killed before it); nil for a piece torn mid-line.
	PieceEvent *auditevent.Event
}

// Events yields the events of the line text the join was found in, each
// with its line as text holds it: the piece's first when it is an event,
// then the whole line's. A Join with no piece is a line that is one event.
func (j *Join) Events(text []byte) iter.Seq2[[]byte, *auditevent.Event] {
	return func(yield func([]byte, *auditevent.Event) bool) {
		if j.PieceEvent != nil && !yield(text[:j.Piece], j.PieceEvent) {
			return
		}
		yield(text[j.Piece:], &j.Event)
	}
}

// Repeats reports whether the piece of the line text the join was found
// in is the whole line's very bytes: one event written twice, its line
// without its newline and then resent whole, not two writers' events.
func (j *Join) Repeats(text []byte) bool {
	return j.PieceEvent != nil && bytes.Equal(text[:j.Piece], text[j.Piece:])
}

// Find reports where a whole canonical event line begins in text, a line
// without its newline that is not itself an event: text[Piece:] is exactly
// a line some writer wrote whole, and Piece > 0 is the length of the piece
// before it. The only place that fits is where the object that closes at
// the end of text opens (openingOf), whatever the piece holds. The piece
// is then read as an event too when it is exactly a canonical event line:
// one scan and at most two checks, however hostile the line.
func Find(text []byte) (Join, bool) {
	return find(text, canonicalEvent)
}

// find is Find with the check of a candidate given, so a test can count
// the checks.
func find(text []byte, whole func([]byte, *auditevent.Event) bool) (Join, bool) {
	var j Join
	i, ok := openingOf(text)
	if !ok || i == 0 || !hasLineStart(text[i:]) || !whole(text[i:], &j.Event) {
		return Join{}, false
	}
	j.Piece = i
	j.PieceEvent = pieceEvent(text[:i], whole)
	return j, true
}

// pieceEvent is the piece's event when the piece is a whole canonical
// event line: it starts as one and ends at the brace that closes it.
func pieceEvent(piece []byte, whole func([]byte, *auditevent.Event) bool) *auditevent.Event {
	if !hasLineStart(piece) || piece[len(piece)-1] != '}' {
		return nil
	}
	var ev auditevent.Event
	if !whole(piece, &ev) {
		return nil
	}
	return &ev
}

// openingOf returns where the object that text ends with opens, read
// backwards from its last byte. Read from the end, every byte of a JSON
// value up to its opening brace is the value's own, so quotes (those not
// escaped by an odd run of backslashes) and brackets are read as the
// writer wrote them; the torn piece before it is never reached.
func openingOf(text []byte) (int, bool) {
	if len(text) == 0 || text[len(text)-1] != '}' {
		return 0, false // no event line ends here
	}
	depth, inString := 0, false
	for i := len(text) - 1; i >= 0; i-- {
		c := text[i]
		if c == '"' && !escaped(text, i) {
			inString = !inString
			continue
		}
		if inString {
			continue
		}
		switch c {
		case '}', ']':
			depth++
		case '{', '[':
			if depth--; depth == 0 {
				return i, c == '{'
			}
		}
	}
	return 0, false
}

// escaped reports whether the byte at i follows an odd run of backslashes.
func escaped(text []byte, i int) bool {
	run := 0
	for i > 0 && text[i-1] == '\\' {
		run, i = run+1, i-1
	}
	return run%2 == 1
}

func hasLineStart(b []byte) bool {
	return len(b) >= len(lineStart) && string(b[:len(lineStart)]) == lineStart
}

// canonicalEvent reports whether text (without its newline) is exactly
// the canonical line of the event it decodes to, as verify and the spool
// check a line: decoded into ev without made-up ids, encoded again, and
// equal byte for byte.
func canonicalEvent(text []byte, ev *auditevent.Event) bool {
	if err := (auditevent.DecodeOptions{NoIDDefaults: true}).DecodeInto(text, ev); err != nil {
		return false
	}
	return bytes.Equal(auditevent.AppendJSON(make([]byte, 0, len(text)), ev), text)
}
