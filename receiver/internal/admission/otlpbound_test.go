package admission

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"
)

func TestJSONObjects(t *testing.T) {
	spans, objects := jsonObjects([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{},{"name":"{[\"spans\":[{}]"},` +
		`{"attributes":[{"key":"a","value":{}}]}]}]}]}`))
	assert.Equal(t, int64(3), spans, "the spans array's elements, not the brackets in a string")
	assert.Equal(t, int64(5), objects, "the request, ResourceSpans, ScopeSpans, an attribute and its value")
}

func TestProtoObjects(t *testing.T) {
	bytesField := func(num protowire.Number, v []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
	}
	attr := bytesField(9, append(bytesField(1, []byte("key")), bytesField(2, nil)...)) // KeyValue{key, AnyValue{}}
	span := append(bytesField(5, []byte("a name")), attr...)
	scope := append(bytesField(2, nil), bytesField(2, span)...)
	req := bytesField(1, bytesField(2, scope))
	spans, objects, ok := protoObjects(req, 0, protoDepth)
	require.True(t, ok)
	assert.Equal(t, int64(2), spans)
	assert.Equal(t, int64(4), objects, "ResourceSpans, ScopeSpans, the KeyValue and its AnyValue; not the strings")
}

// A real request's bound is a small multiple of its size; one of empty
// spans, which decodes to about a hundred times its size, is bound by
// more than that.
func TestOTLPBoundRatios(t *testing.T) {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range 100 {
		s := spans.AppendEmpty()
		s.SetName("sandbox.exec")
		s.SetTraceID([16]byte{1, byte(i)})
		s.SetSpanID([8]byte{2, byte(i)})
		s.Attributes().PutStr("sandbox.operation", "exec")
		s.Attributes().PutStr("sandbox.session.id", "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")
		s.Attributes().PutInt("sandbox.event.start_seq", int64(i))
		s.Attributes().PutStr("sandbox.start_data", `{"command":["ls","-l"]}`)
	}
	req := ptraceotlp.NewExportRequestFromTraces(td)
	pb, err := req.MarshalProto()
	require.NoError(t, err)
	js, err := req.MarshalJSON()
	require.NoError(t, err)
	for name, c := range map[string]struct {
		body     []byte
		protobuf bool
	}{"protobuf": {pb, true}, "JSON": {js, false}} {
		ratio := float64(OTLPBound(c.body, c.protobuf)) / float64(len(c.body))
		assert.Less(t, ratio, 5.0, "%s: a real request bound at %.1f times its size", name, ratio)
	}
	empty := []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[` + strings.Repeat("{},", 999) + `{}]}]}]}`)
	assert.Greater(t, OTLPBound(empty, false), int64(len(empty))*70)
	scope := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), bytes.Repeat([]byte{0x12, 0}, 1000))
	emptyPB := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), scope)
	assert.Greater(t, OTLPBound(emptyPB, true), int64(len(emptyPB))*100)
}
