package sandboxauditreceiver

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// compressAs compresses b as the Content-Encoding enc.
func compressAs(t *testing.T, enc string, b []byte) []byte {
	t.Helper()
	if enc == "snappy" {
		return snappy.Encode(nil, b)
	}
	var out bytes.Buffer
	var w io.WriteCloser
	switch enc {
	case "gzip":
		w = gzip.NewWriter(&out)
	case "deflate":
		w = zlib.NewWriter(&out)
	case "zstd":
		zw, err := zstd.NewWriter(&out)
		require.NoError(t, err)
		w = zw
	case "lz4":
		w = lz4.NewWriter(&out)
	default:
		t.Fatalf("no encoder for %s", enc)
	}
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return out.Bytes()
}

// corruptions are ways a compressed body can fail to decode: not the
// format at all, cut part-way (its framing, Content-Length, still right),
// its middle altered (all but a snappy block carry a checksum), and empty.
func corruptions(enc string, good []byte) map[string][]byte {
	flipped := bytes.Clone(good)
	for i := len(flipped) / 3; i < len(flipped)*2/3; i++ {
		flipped[i] ^= 0x5a
	}
	c := map[string][]byte{
		"not compressed": []byte("this is not compressed at all, not in any coding"),
		"cut part-way":   good[:len(good)/2],
		"altered":        flipped,
	}
	switch enc {
	case "snappy":
		delete(c, "altered")
	case "gzip", "deflate":
		// Empty is an empty stream to the others.
		c["empty"] = nil
	}
	return c
}

// TestCorruptBodyNamesItsEncoding: a body that does not decode as its
// Content-Encoding says is a 400 whose message names that coding, in each
// endpoint's form (plain text for the event intake, a google.rpc.Status
// for OTLP), counted as bad_encoding; nothing of it is delivered. The
// same bodies, whole, are accepted.
func TestCorruptBodyNamesItsEncoding(t *testing.T) {
	set, tel := recordingSettings(t)
	logs := new(consumertest.LogsSink)
	tr := startReceiverWith(t, set, logs, nil)
	intakes := []struct {
		url, contentType string
		plain            []byte
	}{
		{tr.eventsURL(), contentTypeNDJSON, ndjsonBody("enc", 20)},
		{tr.tracesURL(), contentTypeProtobuf, marshalTraces(t, sandboxTraces(), contentTypeProtobuf)},
		{tr.tracesURL(), contentTypeJSON, marshalTraces(t, sandboxTraces(), contentTypeJSON)},
	}
	refused := 0
	for _, enc := range []string{"gzip", "deflate", "zstd", "lz4", "snappy"} {
		for _, in := range intakes {
			good := compressAs(t, enc, in.plain)
			for name, body := range corruptions(enc, good) {
				status, answer := postEncoded(t, in.url, in.contentType, enc, body)
				require.Equal(t, http.StatusBadRequest, status, "%s %s to %s: %s", name, enc, in.contentType, answer)
				msg := answer
				if in.url == tr.tracesURL() {
					var st spb.Status
					if in.contentType == contentTypeProtobuf {
						require.NoError(t, proto.Unmarshal([]byte(answer), &st))
					} else {
						require.NoError(t, protojson.Unmarshal([]byte(answer), &st), answer)
					}
					assert.Equal(t, int32(codes.InvalidArgument), st.GetCode())
					msg = st.GetMessage()
				}
				assert.Contains(t, msg, "Content-Encoding "+enc+":", "%s %s to %s", name, enc, in.contentType)
				refused++
			}
			require.Zero(t, logs.LogRecordCount(), "%s to %s: a corrupt body delivered events", enc, in.contentType)
		}
	}
	requests := counterValues(t, tel, "otelcol_sandboxaudit_receiver_requests")
	assert.Equal(t, int64(refused), requests["endpoint=events,http.response.status_code=400,outcome=bad_encoding"]+
		requests["endpoint=traces,http.response.status_code=400,outcome=bad_encoding"])

	for _, enc := range []string{"gzip", "deflate", "zstd", "lz4", "snappy"} {
		status, answer := postEncoded(t, tr.eventsURL(), contentTypeNDJSON, enc, compressAs(t, enc, ndjsonBody("enc-"+enc, 2)))
		require.Equal(t, http.StatusOK, status, "%s: %s", enc, answer)
	}
	assert.Equal(t, 10, logs.LogRecordCount())
}

// TestCompressedBodyCutShortIsNotBlamedOnItsEncoding: a compressed body
// whose transfer stops before its Content-Length is answered as any body
// cut short, not as one that does not decode.
func TestCompressedBodyCutShortIsNotBlamedOnItsEncoding(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	for _, enc := range []string{"gzip", "zstd", "lz4"} {
		good := compressAs(t, enc, ndjsonBody("cut-"+enc, 20))
		head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Encoding: %s\r\nContent-Length: %d\r\n\r\n",
			tr.r.cfg.EventsPath, enc, len(good))
		status, answer := sendCutShort(t, tr, head, good[:len(good)/2])
		assert.Equal(t, http.StatusBadRequest, status, answer)
		assert.Equal(t, "cannot read request body: unexpected EOF\n", answer, enc)
	}
}

// TestDeflateBodyWithBytesAfterItsStream: a deflate (zlib) stream ends at
// its checksum; a body with more after it, a second stream or plain
// lines, is refused naming the coding, not answered 200 for the first
// stream's events alone. With deflate left out of compression_algorithms
// it is a 415.
func TestDeflateBodyWithBytesAfterItsStream(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil)
	first := compressAs(t, "deflate", ndjsonBody("first", 3))
	for name, rest := range map[string][]byte{
		"a second stream": compressAs(t, "deflate", ndjsonBody("second", 4)),
		"plain lines":     ndjsonBody("plain", 2),
	} {
		for _, enc := range []string{"deflate", "zlib"} {
			status, answer := postEncoded(t, tr.eventsURL(), contentTypeNDJSON, enc, append(bytes.Clone(first), rest...))
			assert.Equal(t, http.StatusBadRequest, status, "%s after a %s stream: %s", name, enc, answer)
			assert.Contains(t, answer, "Content-Encoding "+enc+": data after the end of the compressed stream")
		}
	}
	assert.Zero(t, logs.LogRecordCount())
	status, answer := postEncoded(t, tr.eventsURL(), contentTypeNDJSON, "deflate", first)
	require.Equal(t, http.StatusOK, status, answer)
	assert.Equal(t, 3, logs.LogRecordCount())

	off := startReceiver(t, logs, nil, func(c *Config) { c.ServerConfig.CompressionAlgorithms = []string{"", "gzip"} })
	for _, enc := range []string{"deflate", "zlib"} {
		status, answer = postEncoded(t, off.eventsURL(), contentTypeNDJSON, enc, first)
		assert.Equal(t, http.StatusUnsupportedMediaType, status, "%s: %s", enc, answer)
	}
}
