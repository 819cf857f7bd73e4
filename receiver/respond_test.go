package sandboxauditreceiver

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// A message quoting bytes that are not UTF-8 still makes a status the
// client can decode, in both encodings.
func TestOTLPStatusReplyInvalidUTF8(t *testing.T) {
	msg := "cannot decode \xff\xfe here"
	rp := otlpStatusReply(http.StatusServiceUnavailable, outcomeRefusedRetryable, contentTypeProtobuf, msg)
	var st spb.Status
	require.NoError(t, proto.Unmarshal(rp.body, &st))
	assert.Equal(t, int32(codes.Unavailable), st.GetCode())
	assert.Equal(t, "cannot decode \uFFFD here", st.GetMessage())

	rp = otlpStatusReply(http.StatusBadRequest, outcomeMalformed, "application/json", msg)
	assert.Equal(t, contentTypeJSON, rp.contentType)
	st.Reset()
	require.NoError(t, protojson.Unmarshal(rp.body, &st))
	assert.Equal(t, int32(codes.InvalidArgument), st.GetCode())
	assert.Equal(t, "cannot decode \uFFFD here", st.GetMessage())
}
