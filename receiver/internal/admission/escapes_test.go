package admission

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// EscapeBound counts five more bytes for each DEL and two for each byte of
// a UTF-8 sequence, over-counting at worst a 0x7E after a DEL in the same
// word: checked against a byte loop.
func TestEscapeBoundCountsEveryHighByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = []byte{'a', '"', 0x7e, 0x7f, 0x80, 0xc3, 0xff, 0x00, 0x01}[rng.IntN(9)]
		}
		exact, tildes := len(b), 0
		for _, c := range b {
			switch {
			case c == 0x7f:
				exact += 5
			case c >= 0x80:
				exact += 2
			case c == 0x7e:
				tildes++
			}
		}
		got := EscapeBound(b)
		if got < int64(exact) || got > int64(exact+5*tildes) {
			t.Fatalf("EscapeBound(%q) = %d, want %d (+5 per 0x7E at most)", b, got, exact)
		}
	}
	// The bound holds for what the encoder writes: valid UTF-8 of one to
	// four bytes, and DEL.
	for _, text := range []string{"é", "日本語", "😀", "\x7f", "a\x7f€"} {
		line := auditevent.Line(&auditevent.Event{Op: "exec", SpanID: text})
		plain := auditevent.Line(&auditevent.Event{Op: "exec", SpanID: ""})
		if grown, bound := len(line)-len(plain), EscapeBound([]byte(text)); int64(grown) > bound {
			t.Fatalf("%q takes %d bytes in a line, more than its bound %d", text, grown, bound)
		}
	}
}

// TestEscapeBoundCoversCanonicalNumbers: a number written with an exponent
// grows in its canonical spelling (1e15 is 1000000000000000.0) by no more
// than exponentBound counts for it, so six such bodies are not all decoded
// before the first is refused.
func TestEscapeBoundCoversCanonicalNumbers(t *testing.T) {
	line := func(num string) []byte {
		body := `{"version":1,"event_id":"0b6d5a4e-8e45-4bb7-9d4c-0e8c4c7c4c11","ts":"2026-03-14T15:09:26.535897Z",` +
			`"session_id":"4f7c1c52-3f1b-4c55-8d0e-2e0b6c1f9a10","seq":1,"op":"exec","phase":"start","span_id":"sandbox_op_1",` +
			`"parent_span_id":null,"trace_id":null,"data":{"x":` + num + `,"command":["sh"],"timeout_s":30.0}}`
		ev, err := auditevent.Decode([]byte(body))
		require.NoError(t, err, num)
		return auditevent.Line(&ev)
	}
	plain := len(line("0"))
	for _, num := range []string{"1e15", "9E15", "1.5e15", "1E+15", "1e-4", "1e-7", "1e16", "1e300", "0.5e16", "123e13", "-1e15"} {
		grown := len(line(num)) - plain - (len(num) - 1)
		assert.LessOrEqual(t, int64(grown), exponentBound([]byte(num)), "%s grows by %d", num, grown)
	}
	assert.Equal(t, int64(14), exponentBound([]byte("1e15")))
	assert.Zero(t, exponentBound([]byte(`"free text"`)))
}
