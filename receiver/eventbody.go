package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/ndjson"
)

// decodeNDJSON decodes an application/x-ndjson body (see ndjson.Decode: a
// single bad line refuses the whole batch, naming the line and the field).
func decodeNDJSON(body []byte, dst []auditevent.Event) ([]auditevent.Event, error) {
	return ndjson.Decode(body, dst)
}

// countLines counts the non-blank lines of an ndjson body, for the refused
// events metric of a batch that was refused as a whole.
func countLines(body []byte) int {
	return ndjson.CountLines(body)
}
