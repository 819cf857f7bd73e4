package cli

import (
	"fmt"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// Well-formed ids, as verify checks them:
//
//   - event_id and session_id are UUIDs; decoding checks that and the
//     canonical comparison checks their spelling (lowercase, hyphenated).
//   - span_id is a non-empty string. It is not required to be an OTel id:
//     the Python SDK writes ids such as "sandbox_op_<32 hex>".
//   - trace_id and parent_span_id are null or non-empty strings, and
//     parent_span_id differs from span_id.
//   - an id spelled like an OTel id (32 hex digits for trace_id, 16 for
//     span_id and parent_span_id) must be what a span gives (docs/format.md):
//     lowercase hex, and not all zeros (the OTel "invalid" id).
func checkIDs(e *auditevent.Event) []string {
	var probs []string
	if e.SpanID == "" {
		probs = append(probs, "span_id: empty")
	} else if msg := otelShaped(e.SpanID, 16); msg != "" {
		probs = append(probs, "span_id: "+msg)
	}
	if e.ParentSpanID != nil {
		switch p := *e.ParentSpanID; p {
		case "":
			probs = append(probs, "parent_span_id: empty string (want null for no parent)")
		case e.SpanID:
			probs = append(probs, "parent_span_id: equals span_id")
		default:
			if msg := otelShaped(p, 16); msg != "" {
				probs = append(probs, "parent_span_id: "+msg)
			}
		}
	}
	if e.TraceID != nil {
		if *e.TraceID == "" {
			probs = append(probs, "trace_id: empty string (want null for no trace)")
		} else if msg := otelShaped(*e.TraceID, 32); msg != "" {
			probs = append(probs, "trace_id: "+msg)
		}
	}
	return probs
}

// otelShaped returns a problem when id has the shape of an OTel id of n hex
// digits but is not a valid lowercase one, and "" otherwise.
func otelShaped(id string, n int) string {
	if len(id) != n {
		return ""
	}
	upper, zero := false, true
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= '0' && c <= '9':
			if c != '0' {
				zero = false
			}
		case c >= 'a' && c <= 'f':
			zero = false
		case c >= 'A' && c <= 'F':
			zero, upper = false, true
		default:
			return "" // not hex: some other id scheme
		}
	}
	if zero {
		return fmt.Sprintf("all-zero %d-digit id (the OTel invalid id)", n)
	}
	if upper {
		return fmt.Sprintf("%d-digit hex id in upper case (OTel ids are written in lowercase)", n)
	}
	return ""
}
