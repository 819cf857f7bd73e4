package logmap

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// EventInBody is ReadEventInBody's event, and whether the body is one.
func EventInBody(lr plog.LogRecord) (e auditevent.Event, ok bool) {
	e, holds := ReadEventInBody(lr)
	return e, holds == BodyEvent
}

// decodeEveryObject is EventInBody without its filter on "phase": every
// text body that opens an object goes to the decoder. EventInBody must
// answer as it does for every body.
func decodeEveryObject(lr plog.LogRecord) (e auditevent.Event, ok bool) {
	if lr.Body().Type() != pcommon.ValueTypeStr || !isObjectText(lr.Body().Str()) {
		return auditevent.Event{}, false
	}
	if decodeBody(lr, lr.Body().Str(), auditevent.DecodeOptions{}, &e) != nil {
		return auditevent.Event{}, false
	}
	return e, true
}

// bodyEvents are text bodies and whether each is an event: events with the
// "phase" key spelled out, escaped, or far from the start; objects that
// name a phase but are no event; JSON logs of other kinds; malformed JSON.
var bodyEvents = map[string]bool{
	startLine:                                                true,
	finishLine:                                               true,
	" \r\n\t" + startLine:                                    true,
	swapKey(startLine, `"ph\u0061se"`):                       true,
	swapKey(startLine, `"\u0070hase"`):                       true,
	swapKey(startLine, `"\u0050hase"`):                       false, // Phase: names are exact
	swapKey(startLine, `"ph\/ase"`):                          false,
	swapKey(startLine, `"phases"`):                           false,
	swapKey(startLine, `"op_phase"`):                         false,
	strings.Replace(startLine, `"start"`, `"st\u0061rt"`, 1): true,
	`{"op":"exec","phase":"start","seq":1,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"s1"}`: true, // no event_id, ts, data
	`{"op":"exec","phase":"start","seq":1,"span_id":"s1"}`:                                                     false,
	`{"phase":"start"}`:                         false,
	`{"phase":"build","stdout":"x","msg":"ok"}`: false,
	`{"msg":"the \"phase\" is start"}`:          false,
	`{"msg":"caf\u00e9","stdout":"x"}`:          false,
	`{"level":"info","msg":"request done","status":200,"data":{"path":"/health"}}`: false,
	startLine[:len(startLine)-1]: false,
	startLine + "x":              false,
	startLine + startLine:        false,
	"[" + startLine + "]":        false,
	`{"phase":"start",`:          false,
	`{}`:                         false,
	`{`:                          false,
	"GET /health 200":            false,
	`phase "start" done`:         false,
	"":                           false,
}

// swapKey is line with its "phase" key spelled key.
func swapKey(line, key string) string {
	return strings.Replace(line, `"phase"`, key, 1)
}

// TestEventInBodyAsEveryObjectDecoded: EventInBody finds the events of
// bodyEvents, and only those, and reads each as the decoder alone reads
// it, the record's defaults included.
func TestEventInBodyAsEveryObjectDecoded(t *testing.T) {
	for body, want := range bodyEvents {
		lr := plog.NewLogRecord()
		lr.SetEventName("app.line")
		lr.SetTimestamp(1_773_500_966_535_897_000)
		lr.Body().SetStr(body)
		e, ok := EventInBody(lr)
		assert.Equal(t, want, ok, "%q", body)
		oldE, oldOK := decodeEveryObject(lr)
		assert.Equal(t, oldOK, ok, "%q", body)
		assert.Equal(t, oldE, e, "%q", body)
	}
}

// TestEventInBodyNotText: a body that is neither text nor bytes is no
// event, whatever it holds.
func TestEventInBodyNotText(t *testing.T) {
	for name, set := range map[string]func(pcommon.Value){
		"map": func(v pcommon.Value) {
			m := v.SetEmptyMap()
			m.PutStr("phase", "start")
			m.PutStr("op", "exec")
		},
		"list":  func(v pcommon.Value) { v.SetEmptySlice().AppendEmpty().SetStr(startLine) },
		"int":   func(v pcommon.Value) { v.SetInt(1) },
		"empty": func(pcommon.Value) {},
	} {
		lr := plog.NewLogRecord()
		set(lr.Body())
		_, ok := EventInBody(lr)
		assert.False(t, ok, name)
	}
}

// FuzzEventInBodyAsEveryObjectDecoded: for any text body, EventInBody
// answers as decodeEveryObject. Seeds: bodyEvents.
func FuzzEventInBodyAsEveryObjectDecoded(f *testing.F) {
	for body := range bodyEvents {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		lr := plog.NewLogRecord()
		lr.Body().SetStr(body)
		e, ok := EventInBody(lr)
		oldE, oldOK := decodeEveryObject(lr)
		require.Equal(t, oldOK, ok)
		require.Equal(t, oldE, e)
	})
}
