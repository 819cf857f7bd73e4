package spanmap

import (
	"crypto/sha1" //nolint:gosec // UUIDv5 is defined on SHA-1; this is naming, not security.
	"encoding/hex"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// eventIDNamespace is the UUIDv5 namespace of derived ids (docs/format.md,
// "Inside the collector"): d5522618-d9a4-5682-af63-f0e537900855.
var eventIDNamespace = uuid.UUID{
	0xd5, 0x52, 0x26, 0x18, 0xd9, 0xa4, 0x56, 0x82,
	0xaf, 0x63, 0xf0, 0xe5, 0x37, 0x90, 0x08, 0x55,
}

// DeriveEventID returns the event id of a span's phase when the span does not
// carry one: UUIDv5(namespace, "<trace_id>/<span_id>/<phase>") over the
// span's lowercase hex ids, so the same span always maps to the same events.
func DeriveEventID(traceID pcommon.TraceID, spanID pcommon.SpanID, phase auditevent.Phase) uuid.UUID {
	var d derivedIDs
	d.set(traceID, spanID)
	return d.id(phase)
}

// derivedIDs derives both of a span's event ids from one encoding of its
// ids: the namespace, then "<trace_id>/<span_id>/" in lowercase hex, then
// the phase, which is all that differs.
type derivedIDs struct {
	text [len(eventIDNamespace) + 32 + 1 + 16 + 1 + len("finish")]byte
}

// derivedPrefix is the length of the namespace and the span's ids.
const derivedPrefix = len(eventIDNamespace) + 32 + 1 + 16 + 1

func (d *derivedIDs) set(traceID pcommon.TraceID, spanID pcommon.SpanID) {
	d.setHex(traceID, spanID, nil)
}

// setHex is set taking the hex text of the ids that hexIDs (nil: none)
// already holds, as spanHexIDs wrote it, instead of encoding them again.
func (d *derivedIDs) setHex(traceID pcommon.TraceID, spanID pcommon.SpanID, hexIDs *spanStrings) {
	n := copy(d.text[:], eventIDNamespace[:])
	if hexIDs != nil && len(hexIDs.traceID) == 2*len(traceID) {
		n += copy(d.text[n:], hexIDs.traceID)
	} else {
		n += encodeHex(d.text[n:], traceID[:])
	}
	d.text[n] = '/'
	n++
	if hexIDs != nil && len(hexIDs.spanID) == 2*len(spanID) {
		n += copy(d.text[n:], hexIDs.spanID)
	} else {
		n += encodeHex(d.text[n:], spanID[:])
	}
	d.text[n] = '/'
}

// id is the event id of the span's phase; set must have run.
func (d *derivedIDs) id(phase auditevent.Phase) uuid.UUID {
	n := derivedPrefix + copy(d.text[derivedPrefix:], phase.String())
	return v5(sha1.Sum(d.text[:n])) //nolint:gosec // see import
}

// DeriveTraceID is the trace id of events whose trace_id is not an OTel id:
// the session UUID's bytes, so one session is one trace (the nil UUID, which
// is not a valid trace id, is hashed instead).
func DeriveTraceID(session uuid.UUID) pcommon.TraceID {
	if session == uuid.Nil {
		var name [36]byte
		encodeUUID(name[:], session)
		return pcommon.TraceID(uuidV5(name[:]))
	}
	return pcommon.TraceID(session)
}

// DeriveSpanID is the span id of events whose span_id is not an OTel id: the
// first 8 bytes of UUIDv5(namespace, "<session_id>/<span_id>"). The UUID
// version bits sit in byte 6, so the result is never the invalid all-zero id.
func DeriveSpanID(session uuid.UUID, spanID string) pcommon.SpanID {
	var stack [128]byte
	name := stack[:37]
	encodeUUID(name, session)
	name[36] = '/'
	name = append(name, spanID...)
	u := uuidV5(name)
	var id pcommon.SpanID
	copy(id[:], u[:8])
	return id
}

// uuidV5 is uuid.NewSHA1(eventIDNamespace, name) without its allocations.
func uuidV5(name []byte) uuid.UUID {
	var stack [160]byte
	buf := append(stack[:0], eventIDNamespace[:]...)
	buf = append(buf, name...)
	return v5(sha1.Sum(buf)) //nolint:gosec // see import
}

// v5 makes a name-based SHA-1 UUID (version 5) of the hash of the
// namespace and the name.
func v5(sum [sha1.Size]byte) uuid.UUID {
	var u uuid.UUID
	copy(u[:], sum[:16])
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u
}

// encodeUUID writes the 36-byte lowercase hyphenated form into dst.
func encodeUUID(dst []byte, u uuid.UUID) {
	hex.Encode(dst[0:8], u[0:4])
	dst[8] = '-'
	hex.Encode(dst[9:13], u[4:6])
	dst[13] = '-'
	hex.Encode(dst[14:18], u[6:8])
	dst[18] = '-'
	hex.Encode(dst[19:23], u[8:10])
	dst[23] = '-'
	hex.Encode(dst[24:36], u[10:16])
}

// EventTraceID is the trace id of e's span (docs/format.md, "Inside the
// collector"): its trace_id where that is an OTel id, otherwise the
// session's derived one. exact reports whether the id alone spells trace_id
// back.
func EventTraceID(e *auditevent.Event) (id pcommon.TraceID, exact bool) {
	if e.TraceID != nil {
		if id, ok := ParseTraceID(*e.TraceID); ok {
			return id, isLowerHexOf(*e.TraceID, id[:])
		}
	}
	return DeriveTraceID(e.SessionID), false
}

// EventSpanID is the span id of e's span, as EventTraceID is its trace id.
func EventSpanID(e *auditevent.Event) (id pcommon.SpanID, exact bool) {
	if id, ok := ParseSpanID(e.SpanID); ok {
		return id, isLowerHexOf(e.SpanID, id[:])
	}
	return DeriveSpanID(e.SessionID, e.SpanID), false
}

// ParseTraceID reads an OTel trace id: 32 hex digits in any case, not all
// zero. It reports false for anything else (such as a Python SDK id string).
func ParseTraceID(s string) (pcommon.TraceID, bool) {
	var id pcommon.TraceID
	if !decodeID(id[:], s) || id.IsEmpty() {
		return pcommon.TraceID{}, false
	}
	return id, true
}

// ParseSpanID reads an OTel span id: 16 hex digits in any case, not all zero.
func ParseSpanID(s string) (pcommon.SpanID, bool) {
	var id pcommon.SpanID
	if !decodeID(id[:], s) || id.IsEmpty() {
		return pcommon.SpanID{}, false
	}
	return id, true
}

// decodeID fills dst from s, exactly 2*len(dst) hex digits in any case. The
// []byte(s) conversion costs no allocation (hex.Decode only reads it; see
// TestIDHelpersDoNotAllocate).
func decodeID(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	_, err := hex.Decode(dst, []byte(s))
	return err == nil
}

// isLowerHexOf reports whether s is exactly the lowercase hex spelling of id,
// i.e. whether the id alone gives back s.
func isLowerHexOf(s string, id []byte) bool {
	var buf [2 * len(pcommon.TraceID{})]byte
	if len(s) != 2*len(id) || len(s) > len(buf) {
		return false
	}
	n := hex.Encode(buf[:], id)
	return string(buf[:n]) == s
}
