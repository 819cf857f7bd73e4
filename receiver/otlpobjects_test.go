package sandboxauditreceiver

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"
)

// emptySpans is an OTLP traces request of n empty spans, in protobuf (2
// bytes a span) or JSON (3 bytes).
func emptySpans(n int, protobuf bool) []byte {
	if !protobuf {
		return []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[` + strings.Repeat("{},", n-1) + `{}]}]}]}`)
	}
	spans := bytes.Repeat([]byte{0x12, 0x00}, n)
	scope := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), spans)
	return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), scope)
}

// TestTracesObjectsAreBudgeted: what an OTLP request decodes to is counted
// before it is decoded, by its spans and other objects: an empty span
// takes 2 or 3 bytes and decodes to about 220, so 30 requests of 1 MB took
// the collector past 1.1 GiB, and one of 20 MiB to about 1 GiB, while each
// reserved its body's size. A request of more than the whole budget holds
// is a 413; a real one is still taken.
func TestTracesObjectsAreBudgeted(t *testing.T) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil, func(c *Config) {
		c.ServerConfig.MaxRequestBodySize = 1 << 20
		c.MaxInflightBytes = 16 << 20
	})
	for _, ct := range []string{contentTypeProtobuf, contentTypeJSON} {
		body := emptySpans(100_000, ct == contentTypeProtobuf) // 22 MB decoded
		require.Less(t, len(body), 1<<20)
		status, _, answer := post(t, tr.tracesURL(), ct, body)
		assert.Equal(t, http.StatusRequestEntityTooLarge, status, "%s: %s", ct, answer)

		req := ptraceotlp.NewExportRequestFromTraces(sandboxTraces())
		var real []byte
		var err error
		if ct == contentTypeProtobuf {
			real, err = req.MarshalProto()
		} else {
			real, err = req.MarshalJSON()
		}
		require.NoError(t, err)
		status, _, answer = post(t, tr.tracesURL(), ct, real)
		assert.Equal(t, http.StatusOK, status, "%s: %s", ct, answer)
	}
	// The span's start and finish; sent again as JSON, they are duplicates.
	assert.Equal(t, 2, sink.LogRecordCount())
}
