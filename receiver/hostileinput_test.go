package sandboxauditreceiver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

const hostileSessionID = "../../etc/passwd?token=SESSION-SECRET-42"

// TestInvalidSessionIDIsNeverQuoted: a session id that is not a UUID is
// not repeated to anyone: not in the OTLP partialSuccess message, not in
// a 400 body of the event intake, not in any receiver log line. The answer
// still names the attribute or field and says what is wrong.
func TestInvalidSessionIDIsNeverQuoted(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	tr := startReceiverWith(t, set, new(consumertest.LogsSink), nil)

	td := sandboxTraces()
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("sandbox.session.id", hostileSessionID)
	for _, ct := range []string{contentTypeProtobuf, contentTypeJSON} {
		status, _, body := post(t, tr.tracesURL(), ct, marshalTraces(t, td, ct))
		require.Equal(t, http.StatusOK, status, body)
		resp := ptraceotlp.NewExportResponse()
		if ct == contentTypeJSON {
			require.NoError(t, resp.UnmarshalJSON([]byte(body)))
		} else {
			require.NoError(t, resp.UnmarshalProto([]byte(body)))
		}
		msg := resp.PartialSuccess().ErrorMessage()
		assert.Contains(t, msg, "sandbox.session.id")
		assert.Contains(t, msg, fmt.Sprintf("not a UUID (%d bytes)", len(hostileSessionID)))
		assert.NotContains(t, msg, "SESSION-SECRET")
		assert.NotContains(t, msg, "etc/passwd")
	}

	line := strings.Replace(startJSON(1), testSession.String(), hostileSessionID, 1)
	status, _, body := post(t, tr.eventsURL(), contentTypeNDJSON, []byte(startJSON(2)+"\n"+line+"\n"))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "line 2: session_id")
	assert.NotContains(t, body, "SESSION-SECRET")

	require.NotZero(t, logs.Len(), "the invalid spans are logged")
	for _, e := range logs.All() {
		assert.NotContains(t, e.Message, "SESSION-SECRET")
		for k, v := range e.ContextMap() {
			assert.NotContains(t, fmt.Sprint(v), "SESSION-SECRET", "log %q field %s", e.Message, k)
		}
	}
}

// TestBadBytesAreNamed: a line holding a byte that is not UTF-8 is
// reported as such with its offset, and a NUL line as a control byte, not
// as the end of the input.
func TestBadBytesAreNamed(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	for body, want := range map[string]string{
		startJSON(1) + "\n\xff\n":                 "line 2: invalid UTF-8 at byte 0",
		startJSON(1) + "\n\x00\n":                 "line 2: invalid JSON at byte 0: unexpected control byte 0x00",
		`{"version":1,"op":"` + "ex\xffec" + `"}`: "invalid UTF-8 at byte 21",
	} {
		status, _, got := post(t, tr.eventsURL(), contentTypeNDJSON, []byte(body))
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Contains(t, got, want)
		assert.NotContains(t, got, "ÿ")
	}
}

// TestBadEnumValuesAreNeverQuoted: an op or error_code the intake does not
// know is not repeated in the 400 body (a client that put a token there by
// mistake must not see it again in its logs or a proxy's); the body names
// the field and what it accepts.
func TestBadEnumValuesAreNeverQuoted(t *testing.T) {
	tr := startReceiver(t, new(consumertest.LogsSink), nil)
	const secret = "ghp_ENUMSECRET0123456789abcdefghijklmnop"
	for field, ev := range map[string]string{
		"op":         strings.Replace(startJSON(1), `"op":"exec"`, `"op":"`+secret+`"`, 1),
		"error_code": strings.Replace(finishJSON(1), `"error_code":null`, `"error_code":"`+secret+`"`, 1),
	} {
		status, _, body := post(t, tr.eventsURL(), contentTypeJSON, []byte(ev))
		assert.Equal(t, http.StatusBadRequest, status, field)
		assert.True(t, strings.HasPrefix(body, field+": not a "), "%s: %s", field, body)
		assert.NotContains(t, body, "ENUMSECRET", field)
	}
}
