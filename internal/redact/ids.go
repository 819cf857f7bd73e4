package redact

import "strings"

// pythonOpPrefix starts the span ids the Python SDK gives its operations
// (sandbox_op_ and 32 hex digits).
const pythonOpPrefix = "sandbox_op_"

// ID returns the identifier s (an event's span_id, parent_span_id or
// trace_id) with every secret cut, and whether anything was. The receiver
// takes any string there, so a careless client's id may hold a credential.
// An id as tracers make it (PlainID) is left whole without a scan, user
// patterns included: like a hash, it is never a secret, and cutting it
// would break the pairing of a span's lines.
func (r *Redactor) ID(s string, c *Counts) (string, bool) {
	if PlainID(s) {
		return s, false
	}
	return r.String(s, c)
}

// IDPtr is ID for an optional id: nil stays nil.
func (r *Redactor) IDPtr(p *string, c *Counts) *string {
	if p != nil && PlainID(*p) {
		return p
	}
	return r.Ptr(p, c)
}

// PlainID reports whether s is an id as tracers make them, which ID leaves
// whole: hex digits and hyphens only (an OTLP id, a UUID), after the Python
// SDK's sandbox_op_ or not.
func PlainID(s string) bool {
	s = strings.TrimPrefix(s, pythonOpPrefix)
	for i := range len(s) {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F', c == '-':
		default:
			return false
		}
	}
	return true
}
