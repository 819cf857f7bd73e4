package logmap

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// notUTF8Line is startLine with a byte that is not UTF-8 in a data string.
var notUTF8Line = strings.Replace(startLine, `"nested":{`, `"s":"a`+"\xff"+`b","nested":{`, 1)

// bodyPair is two records named name at the same time, one holding body
// as text and the other as bytes.
func bodyPair(name, body string) (text, raw plog.LogRecord) {
	text, raw = plog.NewLogRecord(), plog.NewLogRecord()
	for _, lr := range []plog.LogRecord{text, raw} {
		lr.SetEventName(name)
		lr.SetTimestamp(1_773_500_966_535_897_000)
	}
	text.Body().SetStr(body)
	raw.Body().SetEmptyBytes().FromRaw([]byte(body))
	return text, raw
}

// TestEventInBodyBytesAsText: a body of bytes holding UTF-8 text (the
// filelog receiver's `encoding: nop`) is read as that text is, for every
// body of bodyEvents.
func TestEventInBodyBytesAsText(t *testing.T) {
	for body := range bodyEvents {
		text, raw := bodyPair("app.line", body)
		wantE, wantOK := EventInBody(text)
		e, ok := EventInBody(raw)
		assert.Equal(t, wantOK, ok, "%q", body)
		assert.Equal(t, wantE, e, "%q", body)
	}
}

// TestBytesBodyNotUTF8IsNoEvent: bytes that are not UTF-8 cannot be an
// event's JSON line: no event in a body, and a record named as an event
// is refused, naming the body as a whole.
func TestBytesBodyNotUTF8IsNoEvent(t *testing.T) {
	_, valid := bodyPair(semconv.EventSessionStart, strings.Replace(notUTF8Line, "\xff", "é", 1))
	_, ok := EventInBody(valid)
	require.True(t, ok, "an event once the byte is UTF-8")
	_, _, err := FromLogRecord(valid)
	require.NoError(t, err)

	_, raw := bodyPair(semconv.EventSessionStart, notUTF8Line)
	_, ok = EventInBody(raw)
	assert.False(t, ok)
	_, _, err = FromLogRecord(raw)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrNotAuditEvent)
	fe, ok := errors.AsType[*auditevent.FieldError](err)
	require.True(t, ok, "%v", err)
	assert.Empty(t, fe.Field, "the body as a whole")
	assert.Equal(t, "string_unicode", fe.Type)
	_, st := AppendLogs(nil, logsOf(raw))
	assert.Equal(t, 1, st.Invalid)
}

// TestFromLogRecordBytesBody: a record named as an audit event whose line
// is bytes reads back as the same record with the line as text does, and
// the event keeps nothing of the record's bytes, which may change after.
func TestFromLogRecordBytesBody(t *testing.T) {
	for _, line := range []string{startLine, finishLine, " " + startLine + "\n"} {
		e := decode(t, line)
		text, raw := logRecord(&e), logRecord(&e)
		text.Body().SetStr(line)
		raw.Body().SetEmptyBytes().FromRaw([]byte(line))
		want, _, err := FromLogRecord(text)
		require.NoError(t, err)
		got, dropped, err := FromLogRecord(raw)
		require.NoError(t, err)
		assert.NoError(t, dropped)
		// Overwritten in place: the same length reuses the same array.
		raw.Body().Bytes().FromRaw(bytes.Repeat([]byte{'x'}, len(line)))
		assert.Equal(t, want, got)
		assert.Equal(t, auditevent.Line(&want), auditevent.Line(&got))
	}
}

// TestEventInBodyBytesSayNoWithoutCopy: bytes that cannot be an event
// (no object, or no "phase") are turned away without a copy being made of
// them: most bodies a processor sees are not events.
func TestEventInBodyBytesSayNoWithoutCopy(t *testing.T) {
	for _, body := range []string{
		"GET /health 200 " + strings.Repeat("x", 4096),
		`{"level":"info","msg":"` + strings.Repeat("x", 4096) + `","status":200}`,
	} {
		_, raw := bodyPair("", body)
		allocs := testing.AllocsPerRun(20, func() {
			if _, ok := EventInBody(raw); ok {
				t.Fatal("no event")
			}
		})
		assert.Zero(t, allocs, "%.20q", body)
	}
}

// FuzzEventInBodyBytesAsText: for any body, bytes holding it are read as
// the text is when it is UTF-8, and are no event when it is not. Seeds:
// bodyEvents and a line that is not UTF-8.
func FuzzEventInBodyBytesAsText(f *testing.F) {
	for body := range bodyEvents {
		f.Add(body)
	}
	f.Add(notUTF8Line)
	f.Fuzz(func(t *testing.T, body string) {
		text, raw := bodyPair("", body)
		e, ok := EventInBody(raw)
		if !utf8.ValidString(body) {
			require.False(t, ok)
			return
		}
		wantE, wantOK := EventInBody(text)
		require.Equal(t, wantOK, ok)
		require.Equal(t, wantE, e)
	})
}
