package spanmap

import (
	"encoding/binary"
	"encoding/hex"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// spanStrings backs the id strings both events of a span point at: the
// strings and their text live together, in an idArena's chunk or alone.
type spanStrings struct {
	traceID, parentSpanID, spanID string
	text                          [32 + 16 + 16]byte
}

// idArenaChunk is how many spans' id strings one arena allocation holds
// (about 28 KB): a 1,000-span batch then allocates 4 times instead of
// 1,000. The events are transient, so a chunk is not pinned for long.
const idArenaChunk = 256

// idArena hands out spanStrings from chunks. A full chunk is left to the
// events that point into it and a new one is made, so no pointer moves.
type idArena struct{ chunk []spanStrings }

func (a *idArena) next() *spanStrings {
	if a == nil {
		return &spanStrings{}
	}
	if len(a.chunk) == cap(a.chunk) {
		a.chunk = make([]spanStrings, 0, idArenaChunk)
	}
	a.chunk = a.chunk[:len(a.chunk)+1]
	return &a.chunk[len(a.chunk)-1]
}

// spanHexIDs encodes the span's ids that are wanted (and not empty) into
// ids, a zero spanStrings. Its strings view its text, which is never
// written again.
func spanHexIDs(ids *spanStrings, span ptrace.Span, wantTrace, wantSpan, wantParent bool) *spanStrings {
	n := 0
	view := func(id []byte) string {
		from := n
		n += encodeHex(ids.text[n:], id)
		return unsafe.String(&ids.text[from], n-from)
	}
	if traceID := span.TraceID(); wantTrace && !traceID.IsEmpty() {
		ids.traceID = view(traceID[:])
	}
	if wantSpan {
		spanID := span.SpanID()
		ids.spanID = view(spanID[:])
	}
	if parent := span.ParentSpanID(); wantParent && !parent.IsEmpty() {
		ids.parentSpanID = view(parent[:])
	}
	return ids
}

// encodeHex is hex.Encode for ids: four bytes' digits in one store, from
// a table of digit pairs, where hex.Encode writes a digit at a time.
func encodeHex(dst, src []byte) int {
	n := 2 * len(src)
	for len(src) >= 4 {
		binary.LittleEndian.PutUint64(dst, uint64(hexPairs[src[0]])|uint64(hexPairs[src[1]])<<16|
			uint64(hexPairs[src[2]])<<32|uint64(hexPairs[src[3]])<<48)
		src, dst = src[4:], dst[8:]
	}
	hex.Encode(dst, src)
	return n
}

// hexPairs[b] is b's two lowercase hex digits as a little-endian uint16:
// the high digit first in memory.
var hexPairs = func() (t [256]uint16) {
	const digits = "0123456789abcdef"
	for b := range t {
		t[b] = uint16(digits[b>>4]) | uint16(digits[b&0xF])<<8
	}
	return t
}()
