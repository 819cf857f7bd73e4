package auditevent

import (
	"math/rand/v2"
	"testing"
)

// spanLike returns a copy of e sharing its span's fields the ways a
// mapper's pair or a resend can: the same pointers, equal values behind
// other pointers, or one field changed (op, span_id, session_id,
// parent_span_id or trace_id set, cleared or given another value).
func spanLike(rng *rand.Rand, e Event) Event {
	c := randomEvent(rng)
	c.Op, c.SpanID, c.SessionID, c.ParentSpanID, c.TraceID = e.Op, e.SpanID, e.SessionID, e.ParentSpanID, e.TraceID
	switch rng.IntN(9) {
	case 0:
		c.Op += "x"
	case 1:
		c.SpanID = randomText(rng)
	case 2:
		c.SessionID[rng.IntN(16)] ^= 1
	case 3:
		c.ParentSpanID = maybeText(rng)
	case 4:
		c.TraceID = maybeText(rng)
	case 5:
		if e.TraceID != nil {
			s := *e.TraceID // equal value, another pointer
			c.TraceID = &s
		}
	}
	return c
}

// Lines written with one SpanLines into one buffer are byte for byte the
// lines written alone, through both AppendSpanLine and a policy's, for
// runs of events that share some or all of their span's fields.
func TestSpanLinesWriteWhatLinesAloneWrite(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 37))
	pol := DefaultPolicy()
	for range 2_000 {
		events := []Event{randomEvent(rng)}
		for range rng.IntN(6) {
			events = append(events, spanLike(rng, events[len(events)-1]))
		}
		var want, got []byte
		var sl SpanLines
		for i := range events {
			if rng.IntN(2) == 0 {
				want = AppendLine(want, &events[i])
				got = AppendSpanLine(got, &events[i], &sl)
			} else {
				want = pol.AppendLine(want, &events[i])
				got = pol.AppendSpanLine(got, &events[i], &sl)
			}
		}
		if string(got) != string(want) {
			t.Fatalf("with SpanLines:\n%s\nalone:\n%s", got, want)
		}
	}
}

// A line is copied from only while the buffer still ends where it did:
// not into another buffer, nor into the same one cut back.
func TestSpanLinesCopyOnlyFromTheBufferTheyWrote(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 43))
	first := randomEvent(rng)
	second := first
	second.Phase, second.Seq = PhaseFinish, first.Seq+1
	want := string(AppendLine(nil, &second))

	var sl SpanLines
	buf := AppendSpanLine(make([]byte, 0, 4096), &first, &sl)
	other := make([]byte, len(buf), 4096) // as long, another array
	if got := AppendSpanLine(other, &second, &sl); string(got[len(buf):]) != want {
		t.Fatalf("into another buffer: %s, want %s", got[len(buf):], want)
	}

	sl = SpanLines{}
	buf = AppendSpanLine(buf[:0], &first, &sl)
	for i := range buf {
		buf[i] = 'x' // what a cut-back buffer's caller might leave there
	}
	if got := AppendSpanLine(buf[:1], &second, &sl); string(got[1:]) != want {
		t.Fatalf("after the buffer was cut back: %s, want %s", got[1:], want)
	}
}

// A line is copied from only while the fields it holds are still e's: a
// caller that sets the string a shared pointer points to between lines
// (one variable reused for each span's trace id) gets its new value.
func TestSpanLinesSeeAPointedToValueChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 53))
	first := randomEvent(rng)
	parent, trace := "parent-1", "trace-1"
	first.ParentSpanID, first.TraceID = &parent, &trace
	second := first
	second.Phase, second.Seq = PhaseFinish, first.Seq+1

	var sl SpanLines
	buf := AppendSpanLine(nil, &first, &sl)
	parent, trace = "parent-2", "trace-2"
	want := string(AppendLine(nil, &second))
	if got := AppendSpanLine(buf, &second, &sl); string(got[len(buf):]) != want {
		t.Fatalf("after the pointed-to values changed: %s, want %s", got[len(buf):], want)
	}
}
