package auditevent

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
)

// EncodedLen must agree with the encoder on any event, or the receiver's
// budget would count what the pipeline does not hold.
func TestEncodedLenMatchesTheLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		e := randomEvent(rng)
		if got, want := EncodedLen(&e), len(AppendJSON(nil, &e)); got != want {
			t.Fatalf("event %d: EncodedLen %d, line %d: %s", i, got, want, AppendJSON(nil, &e))
		}
	}
}

// FuzzQuotedLen checks quotedLen against appendQuoted on any bytes,
// invalid UTF-8 included.
func FuzzQuotedLen(f *testing.F) {
	for _, s := range []string{"", "plain", "\x7f\x00\"\\\n", "é😀", "\xff\xc3", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := quotedLen(s), len(appendQuoted(nil, s)); got != want {
			t.Fatalf("quotedLen(%q) = %d, want %d", s, got, want)
		}
	})
}

func randomEvent(rng *rand.Rand) Event {
	e := Event{
		Version:   int64(rng.IntN(3)),
		EventID:   uuid.New(),
		SessionID: uuid.New(),
		Seq:       rng.Int64() - math.MaxInt64/2,
		Op:        randomText(rng),
		SpanID:    randomText(rng),
		TS:        Timestamp{micros: rng.Int64N(3.1e17) - 6e16, offsetMin: int16(rng.IntN(2000) - 1000), kind: tsKind(rng.IntN(4))},
		Phase:     PhaseStart,
	}
	e.ParentSpanID = maybeText(rng)
	e.TraceID = maybeText(rng)
	if rng.IntN(2) == 0 {
		e.Data = newData(append(append([]byte(`{"k":`), appendQuoted(nil, randomText(rng))...), '}'))
	}
	if rng.IntN(2) == 0 {
		return e
	}
	e.Phase = PhaseFinish
	e.OK = rng.IntN(2) == 0
	e.DurationMS = []float64{0, math.Copysign(0, -1), 1.5, 1e22, 3.0000000000000004, 5e-324, rng.Float64() * 1e6}[rng.IntN(7)]
	e.ErrorCode, e.ErrorType, e.ErrorMessage = maybeText(rng), maybeText(rng), maybeText(rng)
	e.Stdout, e.Stderr = maybeText(rng), maybeText(rng)
	if rng.IntN(3) > 0 {
		b := rng.IntN(2) == 0
		e.ErrorRetryable = &b
	}
	return e
}

func maybeText(rng *rand.Rand) *string {
	if rng.IntN(3) == 0 {
		return nil
	}
	s := randomText(rng)
	return &s
}

// randomText mixes plain ASCII, the escaped controls, DEL, two- to
// four-byte UTF-8 and invalid bytes.
func randomText(rng *rand.Rand) string {
	pieces := []string{"a", "Z0 ", "\"", "\\", "\n", "\t", "\x00", "\x1b", "\x7f", "é", "€", "😀", "\xff", "\xe2\x82"}
	var b []byte
	for range rng.IntN(12) {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return string(b)
}
