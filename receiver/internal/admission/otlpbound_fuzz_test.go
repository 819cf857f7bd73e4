package admission

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// FuzzOTLPBound: whatever the body, the walks end without panicking, and
// for a body pdata decodes they count at least its spans.
func FuzzOTLPBound(f *testing.F) {
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{},{"name":"x"}]}]}]}`), false)
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"sp\u0061ns":[{}]}]}]}`), false)
	f.Add([]byte(`:{"a":`), false)
	f.Add([]byte{0x0a, 0x06, 0x12, 0x04, 0x12, 0x00, 0x12, 0x00}, true)
	f.Fuzz(func(t *testing.T, body []byte, protobuf bool) {
		var spans int64
		if protobuf {
			spans, _, _ = protoObjects(body, 0, protoDepth)
		} else {
			spans, _ = jsonObjects(body)
		}
		req := ptraceotlp.NewExportRequest()
		var err error
		if protobuf {
			err = req.UnmarshalProto(body)
		} else {
			err = req.UnmarshalJSON(body)
		}
		if err == nil && int64(req.Traces().SpanCount()) > spans {
			t.Fatalf("counted %d spans, pdata decoded %d", spans, req.Traces().SpanCount())
		}
	})
}
