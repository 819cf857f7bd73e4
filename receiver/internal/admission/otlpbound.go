package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"bytes"

	"google.golang.org/protobuf/encoding/protowire"
)

// What decoding an OTLP request builds, per object, measured on pdata: a
// span about 220 bytes, any other message or JSON object (an attribute, a
// value) at most about 50. An empty span is 2 bytes of protobuf or 3 of
// JSON, so a body of them decodes to 70 to 110 times its size, where real
// requests decode to about twice theirs.
const (
	spanCost   = 224
	objectCost = 56
	// protoDepth is how deep the protobuf walk counts: pdata refuses
	// values nested 100 deep, under the request's own few levels.
	protoDepth = 112
)

// OTLPBound bounds the memory that decoding an OTLP/HTTP traces request of
// body (protobuf, else JSON) builds, besides its canonical lines
// (EscapeBound): a cost for each span and for each other object it may
// hold. Neither walk allocates.
func OTLPBound(body []byte, protobuf bool) int64 {
	var spans, objects int64
	if protobuf {
		spans, objects, _ = protoObjects(body, 0, protoDepth)
	} else {
		spans, objects = jsonObjects(body)
	}
	return spans*spanCost + objects*objectCost
}

// Field numbers on the path from an export request to its spans.
const (
	fieldResourceSpans = 1 // ExportTraceServiceRequest.resource_spans
	fieldScopeSpans    = 2 // ResourceSpans.scope_spans
	fieldSpans         = 2 // ScopeSpans.spans
)

// protoObjects counts the spans of b, a message at level (0: the request,
// 1: ResourceSpans, 2: ScopeSpans), and every other length-delimited field
// at any depth whose payload is itself a well-formed message: an upper
// bound of the messages a decoder builds. ok is false when b is not one.
func protoObjects(b []byte, level, depth int) (spans, objects int64, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return spans, objects, false
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return spans, objects, false
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return spans, objects, false
		}
		b = b[n:]
		if depth == 0 {
			continue
		}
		s, o, inner := protoObjects(v, childLevel(level, num), depth-1)
		if !inner {
			continue // a string or bytes field
		}
		spans, objects = spans+s, objects+o
		if level == 2 && num == fieldSpans {
			spans++
		} else {
			objects++
		}
	}
	return spans, objects, true
}

// childLevel is the level of a field num's payload in a message at level:
// one deeper on the path to the spans, else off it (3).
func childLevel(level int, num protowire.Number) int {
	switch {
	case level == 0 && num == fieldResourceSpans, level == 1 && num == fieldScopeSpans:
		return level + 1
	}
	return 3
}

// jsonObjects counts the objects of a JSON body, and among them those that
// are elements of an array under a "spans" key. Brackets inside strings
// are skipped. Malformed JSON is counted as far as it goes; the decoder
// refuses it.
func jsonObjects(b []byte) (spans, objects int64) {
	// inSpans[i]: the i-th open container is an array under "spans".
	var inSpans []bool
	keyStart, keyEnd := -1, -1 // the last string, a key if ':' follows
	underSpans := false        // the last key was "spans"
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			start := i + 1
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			keyStart, keyEnd = start, min(i, len(b))
		case ':':
			underSpans = false
			if keyStart >= 0 {
				// A key with escapes may spell "spans" too.
				key := b[keyStart:keyEnd]
				underSpans = string(key) == "spans" || bytes.IndexByte(key, '\\') >= 0
			}
			keyStart = -1
		case '[':
			inSpans = append(inSpans, underSpans)
			underSpans = false
		case '{':
			if len(inSpans) > 0 && inSpans[len(inSpans)-1] {
				spans++
			} else {
				objects++
			}
			inSpans = append(inSpans, false)
			underSpans = false
		case ']', '}':
			if len(inSpans) > 0 {
				inSpans = inSpans[:len(inSpans)-1]
			}
		case ',':
			keyStart = -1
		}
	}
	return spans, objects
}
