package auditevent_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// checkLine asserts the encoder's output invariants: one line, valid JSON.
func checkLine(t *testing.T, line []byte) {
	t.Helper()
	if len(line) == 0 || line[len(line)-1] != '\n' {
		t.Fatalf("line does not end in a newline: %q", line)
	}
	if i := bytes.IndexByte(line, '\n'); i != len(line)-1 {
		t.Fatalf("newline inside the line at byte %d: %q", i, line)
	}
	for _, c := range line[:len(line)-1] {
		if c >= utf8.RuneSelf {
			t.Fatalf("non-ASCII byte in canonical line: %q", line)
		}
	}
	if !json.Valid(line) {
		t.Fatalf("line is not valid JSON: %q", line)
	}
}

// FuzzDecode feeds arbitrary bytes to the decoder. Whatever it accepts must
// encode to a valid single line that decodes back to the same event and
// re-encodes identically.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"phase":"start","op":"exec","seq":1,"span_id":"s","session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","ts":"2026-03-14T15:09:26.5+05:30","data":{"b":[1,2.5,-0,"\u00e9"],"a":null}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		ev, err := auditevent.Decode(in)
		checkDecodeString(t, in)
		if err != nil {
			var fe *auditevent.FieldError
			if !errorsAs(err, &fe) || fe.Type == "" {
				t.Fatalf("error %v is not a typed *FieldError", err)
			}
			return
		}
		// An independent grammar check: whatever is accepted is one JSON
		// value (a NUL once hid a second value behind the first).
		if !json.Valid(in) {
			t.Fatalf("accepted %q, which is not one JSON value", in)
		}
		line := auditevent.Line(&ev)
		checkLine(t, line)
		if bound := auditevent.LineBound(&ev); bound < len(line) {
			t.Fatalf("LineBound %d under the line's %d bytes", bound, len(line))
		}
		back, err := auditevent.Decode(line)
		if err != nil {
			t.Fatalf("canonical line %q does not decode: %v", line, err)
		}
		if !reflect.DeepEqual(ev, back) {
			t.Fatalf("round trip changed the event:\n in:  %+v\n out: %+v", ev, back)
		}
		if again := auditevent.Line(&back); !bytes.Equal(line, again) {
			t.Fatalf("re-encoding differs:\n %q\n %q", line, again)
		}
	})
}

// checkDecodeString: decoding the same text from a string, data kept as a
// view of it, gives the same event or the same error as Decode.
func checkDecodeString(t *testing.T, in []byte) {
	t.Helper()
	fixed := auditevent.DecodeOptions{
		Now:   func() time.Time { return time.Unix(1, 0) },
		NewID: func() (uuid.UUID, error) { return uuid.UUID{1}, nil },
	}
	var want, got auditevent.Event
	wantErr := fixed.DecodeInto(in, &want)
	gotErr := fixed.DecodeStringInto(string(in), &got)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("DecodeStringInto error %v, DecodeInto %v", gotErr, wantErr)
	}
	if wantErr == nil && !bytes.Equal(auditevent.Line(&got), auditevent.Line(&want)) {
		t.Fatalf("DecodeStringInto gives %s, DecodeInto %s", auditevent.Line(&got), auditevent.Line(&want))
	}
}

// FuzzEncode builds events from arbitrary field values: the encoder must
// always write one valid JSON line, and decoding it must give the event
// back (strings that are not valid UTF-8 cannot round-trip and are
// replaced, so equality is checked only for valid ones).
func FuzzEncode(f *testing.F) {
	f.Add("00f067aa0ba902b7", "k", "v\u2028\U0001F600\"\\\x00", 1.5, int64(7), int64(1710428966535897), true, []byte(`{"x":[1e400]}`))
	f.Add("", "", "", math.Copysign(0, -1), int64(-1), int64(-62135596800000000), false, []byte(`{}`))
	f.Fuzz(func(t *testing.T, spanID, key, val string, dur float64, seq, micros int64, finish bool, data []byte) {
		d, err := auditevent.MarshalData(map[string]any{key: val, "n": seq, "f": dur})
		if math.IsNaN(dur) || math.IsInf(dur, 0) {
			if err == nil {
				t.Fatal("MarshalData accepted a non-finite float")
			}
			return
		}
		if err != nil {
			t.Fatalf("MarshalData: %v", err)
		}
		if pd, err := auditevent.ParseData(data); err == nil {
			d = pd
		}
		// Keep the instant inside years 1..9999, which the format can spell.
		micros = micros % 253402300799000000
		if micros < -62135596800000000 {
			micros = -micros
		}
		ev := auditevent.Event{
			Version: 1, EventID: uuid.NewSHA1(uuid.Nil, []byte(spanID)), SessionID: uuid.NewSHA1(uuid.Nil, []byte(key)),
			TS: auditevent.TimestampFromTime(timeUnixMicro(micros)), Seq: seq, Op: "exec",
			Phase: auditevent.PhaseStart, SpanID: spanID, TraceID: auditevent.Ptr(val), Data: d,
		}
		if finish {
			ev.Phase = auditevent.PhaseFinish
			ev.DurationMS = dur
			ev.Stdout = auditevent.Ptr(val)
			ev.ErrorMessage = auditevent.Ptr(key)
			ev.ErrorRetryable = auditevent.Ptr(seq%2 == 0)
		}
		line := auditevent.Line(&ev)
		checkLine(t, line)
		back, err := auditevent.Decode(line)
		if !utf8.ValidString(spanID) || !utf8.ValidString(key) || !utf8.ValidString(val) {
			return
		}
		if err != nil {
			t.Fatalf("encoded line %q does not decode: %v", line, err)
		}
		if !reflect.DeepEqual(ev, back) {
			t.Fatalf("round trip changed the event:\n in:  %+v\n out: %+v", ev, back)
		}
	})
}
