package logmap

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// dupRecord is an OTLP/JSON finish record naming the raw output attributes
// more than once, as the wire allows; values are the attribute values in
// order, stdout and stderr alternating.
func dupRecord(t *testing.T, values ...string) plog.Logs {
	t.Helper()
	body, err := json.Marshal(finishLine)
	require.NoError(t, err)
	var attrs []string
	for i, v := range values {
		key := semconv.AttrExecStdoutBytes
		if i%2 == 1 {
			key = semconv.AttrExecStderrBytes
		}
		attrs = append(attrs, `{"key":"`+key+`","value":{"stringValue":"`+v+`"}}`)
	}
	ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{` +
		`"eventName":"` + semconv.EventSessionFinish + `","body":{"stringValue":` + string(body) + `},` +
		`"attributes":[` + strings.Join(attrs, ",") + `]}]}]}]}`))
	require.NoError(t, err)
	require.Equal(t, len(values), ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().Len(),
		"the wire format keeps every copy")
	return ld
}

// TestLastCopyOfRawOutput: a record naming a raw output attribute twice
// gives the output of the last copy, as a span does (spanmap reads the
// last copy, and the processor keeps only that one).
func TestLastCopyOfRawOutput(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

	events, st := AppendLogs(nil, dupRecord(t, b64("first out"), b64("first err"), b64("last out"), b64("last err")))
	require.Len(t, events, 1)
	assert.Equal(t, "last out", string(events[0].StdoutBytes))
	assert.Equal(t, "last err", string(events[0].StderrBytes))
	assert.Zero(t, st.Dropped)

	events, st = AppendLogs(nil, dupRecord(t, "%%%", "%%%", b64("out"), b64("err")))
	require.Len(t, events, 1)
	assert.Equal(t, "out", string(events[0].StdoutBytes), "a malformed first copy is not read")
	assert.Equal(t, "err", string(events[0].StderrBytes))
	assert.Zero(t, st.Dropped)

	events, st = AppendLogs(nil, dupRecord(t, b64("out"), b64("err"), "%%%", b64("err2")))
	require.Len(t, events, 1)
	assert.Nil(t, events[0].StdoutBytes, "a malformed last copy drops the output")
	assert.Nil(t, events[0].Stdout, "and the text it was sent to replace")
	assert.Equal(t, "err2", string(events[0].StderrBytes))
	assert.Equal(t, 1, st.Dropped)
}
