package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"bytes"
	"iter"
	"strconv"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// lineError is why a batch was refused: the first bad line, 1-based,
// counting every line of the body (blank ones too) so that it matches what
// an editor shows.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string {
	return "line " + strconv.Itoa(e.line) + ": " + e.err.Error()
}

func (e *lineError) Unwrap() error { return e.err }

// decodeNDJSON decodes one event per line, appending to dst. Blank lines
// (whitespace only) are skipped, the last line may lack its "\n", and a
// "\r\n" line end is accepted. A single bad line refuses the whole batch:
// the client gets one clear answer and nothing of the batch is delivered.
func decodeNDJSON(body []byte, dst []auditevent.Event) ([]auditevent.Event, error) {
	var opts auditevent.DecodeOptions
	if dst == nil {
		// Events are large; growing the slice would copy them repeatedly.
		dst = make([]auditevent.Event, 0, bytes.Count(body, []byte{'\n'})+1)
	}
	for line, text := range ndjsonLines(body) {
		dst = append(dst, auditevent.Event{})
		if err := opts.DecodeInto(text, &dst[len(dst)-1]); err != nil {
			return dst[:len(dst)-1], &lineError{line: line, err: err}
		}
	}
	return dst, nil
}

// countLines counts the non-blank lines of an ndjson body, for the refused
// events metric of a batch that was refused as a whole.
func countLines(body []byte) int {
	n := 0
	for range ndjsonLines(body) {
		n++
	}
	return n
}

// ndjsonLines yields the non-blank lines of body without their "\n",
// numbered from 1 counting every line.
func ndjsonLines(body []byte) iter.Seq2[int, []byte] {
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
