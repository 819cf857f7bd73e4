// Package tornjoin finds the whole event line that follows a torn piece in
// one physical line. A writer killed mid-line leaves a piece without its
// newline; a writer that appends without looking at the last byte (the
// Python JsonlOutboxSink) then writes its whole line after it, and the two
// read as one line that is not an event (docs/guarantees.md,
// "The file"). The bytes of the second line are all there: readers recover it.
package tornjoin

import (
	"bytes"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// MaxCandidates bounds the places in one line checked as the start of a
// whole event line, so that a hostile line costs at most this many linear
// checks over reading it.
const MaxCandidates = 64

// lineStart is how every canonical event line begins: keys are sorted, so
// data comes first, and it is always an object.
const lineStart = `{"data":{`

// Find reports where a whole canonical event line begins in text, a line
// without its newline that is not itself an event: text[n:] is exactly a
// line some writer wrote whole, and n > 0 is the length of the torn piece
// before it. A canonical line has no proper suffix that is one (any "{"
// inside it opens an object that closes before its end, or sits in a
// string, whose quotes are escaped), so at most one place fits.
func Find(text []byte) (n int, ok bool) {
	return find(text, isCanonicalEvent)
}

// find is Find with the check of a candidate given, so a test can count
// the checks.
func find(text []byte, whole func([]byte) bool) (int, bool) {
	if len(text) < 2 || text[len(text)-1] != '}' {
		return 0, false // no event line ends here
	}
	tried := 0
	for i := 1; i < len(text) && tried < MaxCandidates; i++ {
		j := bytes.IndexByte(text[i:], '{')
		if j < 0 {
			break
		}
		i += j
		if !hasLineStart(text[i:]) {
			continue
		}
		tried++
		if whole(text[i:]) {
			return i, true
		}
	}
	return 0, false
}

func hasLineStart(b []byte) bool {
	return len(b) >= len(lineStart) && string(b[:len(lineStart)]) == lineStart
}

// isCanonicalEvent reports whether text (without its newline) is exactly
// the canonical line of the event it decodes to, as verify and the spool
// check a line: decoded without made-up ids, encoded again, and equal byte
// for byte.
func isCanonicalEvent(text []byte) bool {
	var ev auditevent.Event
	if err := (auditevent.DecodeOptions{NoIDDefaults: true}).DecodeInto(text, &ev); err != nil {
		return false
	}
	return bytes.Equal(auditevent.AppendJSON(make([]byte, 0, len(text)), &ev), text)
}
