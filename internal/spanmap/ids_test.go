package spanmap

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

func TestParseIDs(t *testing.T) {
	traceWant := pcommon.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	for s, ok := range map[string]bool{
		"4bf92f3577b34da6a3ce929d0e0e4736":  true,
		"4BF92F3577B34DA6A3CE929D0E0E4736":  true,
		"4bf92f3577b34da6A3CE929D0E0E4736":  true,
		"4bf92f3577b34da6a3ce929d0e0e473":   false, // one digit short
		"4bf92f3577b34da6a3ce929d0e0e47360": false,
		"4bf92f3577b34da6a3ce929d0e0e473g":  false,
		"4bf92f35-77b3-4da6-a3ce-929d0e0e":  false,
		"00000000000000000000000000000000":  false, // the invalid id
		"":                                  false,
	} {
		id, got := ParseTraceID(s)
		assert.Equal(t, ok, got, s)
		if ok {
			assert.Equal(t, traceWant, id, s)
		} else {
			assert.True(t, id.IsEmpty(), s)
		}
	}

	spanWant := pcommon.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	for s, ok := range map[string]bool{
		"00f067aa0ba902b7":                 true,
		"00F067AA0BA902B7":                 true,
		"00f067aa0ba902b":                  false,
		"00f067aa0ba902bz":                 false,
		"0000000000000000":                 false,
		"4bf92f3577b34da6a3ce929d0e0e4736": false, // a trace id
		"op_1":                             false, // a Python SDK id
	} {
		id, got := ParseSpanID(s)
		assert.Equal(t, ok, got, s)
		if ok {
			assert.Equal(t, spanWant, id, s)
		}
	}
}

func TestIsLowerHexOf(t *testing.T) {
	id := []byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	assert.True(t, isLowerHexOf("00f067aa0ba902b7", id))
	assert.False(t, isLowerHexOf("00F067AA0BA902B7", id), "upper case does not come back from the id")
	assert.False(t, isLowerHexOf("00f067aa0ba902b8", id))
	assert.False(t, isLowerHexOf("00f067aa0ba902b", id))
	assert.False(t, isLowerHexOf("", id))
}

// The id helpers run for every event and every log record; they must not
// allocate (see decodeID).
func TestIDHelpersDoNotAllocate(t *testing.T) {
	s := "4bf92f3577b34da6a3ce929d0e0e4736"
	allocs := testing.AllocsPerRun(100, func() {
		id, ok := ParseTraceID(s)
		if !ok || !isLowerHexOf(s, id[:]) {
			t.Fatal("not parsed")
		}
		if _, ok := ParseSpanID(s[:16]); !ok {
			t.Fatal("not parsed")
		}
		if _, ok := ParseSpanID("zz"); ok {
			t.Fatal("parsed")
		}
	})
	assert.Zero(t, allocs)
}

// The derived ids are the same whether the span's hex ids are encoded
// again or taken from what spanHexIDs wrote, for every subset it wrote.
func TestDerivedIDsFromHexText(t *testing.T) {
	trace := pcommon.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	span := pcommon.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	ps := ptrace.NewSpan()
	ps.SetTraceID(trace)
	ps.SetSpanID(span)
	var want derivedIDs
	want.set(trace, span)
	for _, c := range []struct{ trace, span bool }{{true, true}, {true, false}, {false, true}, {false, false}} {
		var d derivedIDs
		d.setHex(trace, span, spanHexIDs(&spanStrings{}, ps, c.trace, c.span, true))
		assert.Equal(t, string(want.text[:derivedPrefix]), string(d.text[:derivedPrefix]), "%+v", c)
		for _, phase := range []auditevent.Phase{auditevent.PhaseStart, auditevent.PhaseFinish} {
			assert.Equal(t, DeriveEventID(trace, span, phase), d.id(phase), "%+v %s", c, phase)
		}
	}
}

// encodeHex against encoding/hex for every length up to a trace id's.
func TestEncodeHexMatchesEncodingHex(t *testing.T) {
	src := []byte{0x00, 0x01, 0x7f, 0x80, 0x9a, 0xab, 0xcd, 0xef, 0xf0, 0xff, 0x10, 0x2e, 0x3c, 0x4b, 0x5a, 0x69}
	for n := 0; n <= len(src); n++ {
		dst := make([]byte, 2*n)
		assert.Equal(t, 2*n, encodeHex(dst, src[:n]))
		assert.Equal(t, hex.EncodeToString(src[:n]), string(dst), "%d bytes", n)
	}
}
