package tornjoin

import (
	"bytes"
	"testing"
)

// FuzzFind: whatever Find recovers is a suffix of the input after a piece
// of at least one byte, and a valid canonical event line.
func FuzzFind(f *testing.F) {
	torn := line(event(4, `{"command":["sh","-c","echo {\"data\":{}}"],"data":{"data":{"x":1}}}`))
	whole := line(event(5, `{"exit_code":0}`))
	f.Add(append(torn[:50:50], whole...))
	f.Add(append(torn[:len(torn)-1:len(torn)-1], whole...))
	f.Add(whole)
	f.Add([]byte(`{"data":{"data":{}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		n, ok := Find(in)
		if !ok {
			return
		}
		if n <= 0 || n >= len(in) {
			t.Fatalf("piece of %d bytes in a line of %d", n, len(in))
		}
		got := in[n:]
		if !isCanonicalEvent(got) || !bytes.HasSuffix(in, got) {
			t.Fatalf("recovered %q from %q", got, in)
		}
	})
}
