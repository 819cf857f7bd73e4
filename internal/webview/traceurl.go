package webview

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/sandboxaudit/sandboxaudit/internal/trail"
)

// traceTemplate builds trace links from --trace-url.
type traceTemplate struct{ tmpl string }

// CheckTraceURL reports what is wrong with a --trace-url template, so a
// bad one is refused before the trail is read.
func CheckTraceURL(tmpl string) error {
	_, err := parseTraceURL(tmpl)
	return err
}

func parseTraceURL(tmpl string) (*traceTemplate, error) {
	if tmpl == "" {
		return nil, nil
	}
	if !strings.Contains(tmpl, "{trace_id}") {
		return nil, fmt.Errorf("--trace-url: the template needs {trace_id}")
	}
	// Filled with digits, a placeholder in the port parses too, so that the
	// check below names it.
	u, err := url.Parse(strings.NewReplacer("{trace_id}", "1", "{span_id}", "2").Replace(tmpl))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--trace-url: want an http or https URL with {trace_id} (and optionally {span_id})")
	}
	// Filled otherwise, the template must name the same server: an id in
	// the host, port or user name would let the trail choose where a click
	// goes.
	other, err := url.Parse(strings.NewReplacer("{trace_id}", "3", "{span_id}", "4").Replace(tmpl))
	if err != nil || other.Host != u.Host || other.User.String() != u.User.String() {
		return nil, fmt.Errorf("--trace-url: {trace_id} and {span_id} go in the URL's path, query or fragment, not its host, port or user name")
	}
	return &traceTemplate{tmpl: tmpl}, nil
}

// link is the URL for a trace and span; "" without a template or a trace,
// or when an id is longer than a page shows (no backend has such an id).
// The ids come from the trail and are untrusted: every byte but the
// unreserved ones is percent-encoded, so an id means itself in a path and
// in a query alike and cannot add a segment or a parameter. An id "." or
// ".." gets no link: in a path it would step up it, encoded or not (a
// browser reads %2e as a dot).
func (t *traceTemplate) link(traceID, spanID string) string {
	if t == nil || traceID == "" || len(traceID) > maxFieldChars || len(spanID) > maxFieldChars ||
		dotSegment(traceID) || dotSegment(spanID) {
		return ""
	}
	return strings.NewReplacer("{trace_id}", escapeID(traceID), "{span_id}", escapeID(spanID)).Replace(t.tmpl)
}

// sessionLink is the URL for a session's first trace; "" too when the
// session keeps only the id's beginning (no backend has such an id).
func (t *traceTemplate) sessionLink(s *trail.Session) string {
	if s.LongTrace != nil {
		return ""
	}
	return t.link(s.TraceID, "")
}

// dotSegment reports whether an id is a path step, "." or "..".
func dotSegment(id string) bool { return id == "." || id == ".." }

// escapeID percent-encodes every byte of s outside RFC 3986's unreserved
// set (letters, digits, - . _ ~).
func escapeID(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
