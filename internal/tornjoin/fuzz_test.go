package tornjoin

import (
	"bytes"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// FuzzFind: whatever Find recovers is a suffix of the input after a piece
// of at least one byte, a valid canonical event line, and the event Find
// gives back encodes to exactly that line; the piece is given back as an
// event exactly when it is a canonical event line itself.
func FuzzFind(f *testing.F) {
	torn := line(event(4, `{"command":["sh","-c","echo {\"data\":{}}"],"data":{"data":{"x":1}}}`))
	whole := line(event(5, `{"exit_code":0}`))
	f.Add(append(torn[:50:50], whole...))
	f.Add(append(torn[:len(torn)-1:len(torn)-1], whole...))
	f.Add(append(torn[:len(torn):len(torn)], whole...))
	f.Add(whole)
	f.Add([]byte(`{"data":{"data":{}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		j, ok := Find(in)
		if !ok {
			return
		}
		n := j.Piece
		if n <= 0 || n >= len(in) {
			t.Fatalf("piece of %d bytes in a line of %d", n, len(in))
		}
		if got := in[n:]; !bytes.Equal(auditevent.AppendJSON(nil, &j.Event), got) {
			t.Fatalf("recovered %q from %q", got, in)
		}
		var ev auditevent.Event
		isEvent := canonicalEvent(in[:n], &ev)
		if isEvent != (j.PieceEvent != nil) {
			t.Fatalf("piece %q read as an event: %v, is one: %v", in[:n], j.PieceEvent != nil, isEvent)
		}
		if isEvent && !bytes.Equal(auditevent.AppendJSON(nil, j.PieceEvent), in[:n]) {
			t.Fatalf("piece %q read as another event", in[:n])
		}
	})
}
