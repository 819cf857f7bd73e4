package webview

import (
	"fmt"
	"net/url"
	"strings"
)

// traceTemplate builds trace links from --trace-url.
type traceTemplate struct{ tmpl string }

func parseTraceURL(tmpl string) (*traceTemplate, error) {
	if tmpl == "" {
		return nil, nil
	}
	if !strings.Contains(tmpl, "{trace_id}") {
		return nil, fmt.Errorf("--trace-url: the template needs {trace_id}")
	}
	u, err := url.Parse(strings.NewReplacer("{trace_id}", "t", "{span_id}", "s").Replace(tmpl))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--trace-url: want an http or https URL with {trace_id} (and optionally {span_id})")
	}
	return &traceTemplate{tmpl: tmpl}, nil
}

// link is the URL for a trace and span; "" without a template or a trace.
// The ids are path-escaped: they come from the trail and are untrusted.
func (t *traceTemplate) link(traceID, spanID string) string {
	if t == nil || traceID == "" {
		return ""
	}
	return strings.NewReplacer("{trace_id}", url.PathEscape(traceID), "{span_id}", url.PathEscape(spanID)).Replace(t.tmpl)
}
