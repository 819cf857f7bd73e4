package auditevent_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

const baseStart = `"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","seq":1,"op":"exec","phase":"start","span_id":"s","event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ts":"2026-03-14T15:09:26Z"`

// Intake is stricter than pydantic where docs/decisions.md says so, and every
// refusal names its field.
func TestDecodeRejectsNamingTheField(t *testing.T) {
	cases := []struct {
		name, body, field, typ string
	}{
		{"string for int", `{` + strings.Replace(baseStart, `"seq":1`, `"seq":"1"`, 1) + `}`, "seq", "int_type"},
		{"bool for int", `{` + strings.Replace(baseStart, `"seq":1`, `"seq":true`, 1) + `}`, "seq", "int_type"},
		{"seq beyond int64", `{` + strings.Replace(baseStart, `"seq":1`, `"seq":9223372036854775808`, 1) + `}`, "seq", "int_parsing_size"},
		{"number for ts", `{` + strings.Replace(baseStart, `"ts":"2026-03-14T15:09:26Z"`, `"ts":1710428966`, 1) + `}`, "ts", "datetime_type"},
		{"date-only ts", `{` + strings.Replace(baseStart, `2026-03-14T15:09:26Z`, `2026-03-14`, 1) + `}`, "ts", "datetime_parsing"},
		{"Feb 30", `{` + strings.Replace(baseStart, `2026-03-14T`, `2026-02-30T`, 1) + `}`, "ts", "datetime_from_date_parsing"},
		{"hour 24", `{` + strings.Replace(baseStart, `T15:09`, `T24:09`, 1) + `}`, "ts", "datetime_from_date_parsing"},
		{"NaN literal in data", `{` + baseStart + `,"data":{"x":NaN}}`, "data", "json_invalid"},
		{"Infinity literal", `{` + baseStart + `,"data":{"x":-Infinity}}`, "data", "json_invalid"},
		{"float overflow in data", `{` + baseStart + `,"data":{"x":1e400}}`, "data", "value_error"},
		// pydantic's limit is 4,300 characters of number, a minus sign included.
		{"negative integer of 4,300 digits in data", `{` + baseStart + `,"data":{"x":-` + strings.Repeat("9", 4300) + `}}`, "data", "value_error"},
		{"integer of 4,301 digits in an unknown field", `{` + baseStart + `,"other":` + strings.Repeat("9", 4301) + `}`, "other", "value_error"},
		{"negative integer of 4,300 digits in an unknown field", `{` + baseStart + `,"other":-` + strings.Repeat("9", 4300) + `}`, "other", "value_error"},
		{"lone surrogate", `{` + baseStart + `,"data":{"x":"\ud800"}}`, "data", "value_error"},
		{"lone surrogate in unknown field", `{` + baseStart + `,"other":"\udc00"}`, "other", "value_error"},
		// An unknown key is named without its control bytes (a terminal
		// escape in a client's log) and cut when long.
		{"control bytes in an unknown key", `{` + baseStart + `,"a\u0000\u001b[2J":[1,}`, `"a\u0000\u001b[2J"`, "json_invalid"},
		{"long unknown key", `{` + baseStart + `,"` + strings.Repeat("k", 100) + `":[1,}`, `"` + strings.Repeat("k", 64) + `..."`, "json_invalid"},
		{"seq past the float range", `{` + strings.Replace(baseStart, `"seq":1`, `"seq":1e400`, 1) + `}`, "seq", "finite_number"},
		{"finish duration infinite", `{` + strings.Replace(baseStart, `"start"`, `"finish"`, 1) + `,"ok":true,"duration_ms":1e999}`, "duration_ms", "finite_number"},
		{"finish ok as number", `{` + strings.Replace(baseStart, `"start"`, `"finish"`, 1) + `,"ok":1,"duration_ms":1}`, "ok", "bool_type"},
		{"null span_id", `{` + strings.Replace(baseStart, `"span_id":"s"`, `"span_id":null`, 1) + `}`, "span_id", "string_type"},
		{"data null", `{` + baseStart + `,"data":null}`, "data", "dict_type"},
		{"trailing garbage", `{` + baseStart + `} x`, "", "json_invalid"},
		{"NUL before trailing garbage", `{` + baseStart + "}\x00x", "", "json_invalid"},
		{"NUL before a second event", `{` + baseStart + "}\x00{" + baseStart + `}`, "", "json_invalid"},
		{"trailing NUL", `{` + baseStart + "}\x00", "", "json_invalid"},
		{"raw control char", `{` + strings.Replace(baseStart, `"span_id":"s"`, "\"span_id\":\"a\x01\"", 1) + `}`, "span_id", "json_invalid"},
		{"invalid utf-8", `{` + strings.Replace(baseStart, `"span_id":"s"`, "\"span_id\":\"\xff\"", 1) + `}`, "span_id", "json_invalid"},
		{"too deep", `{` + baseStart + `,"data":{"x":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}}`, "data", "json_invalid"},
		{"empty body", ``, "", "json_invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := auditevent.Decode([]byte(c.body))
			var fe *auditevent.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want a *FieldError, got %v", err)
			}
			if fe.Field != c.field || fe.Type != c.typ {
				t.Fatalf("got field %q type %q (%v), want field %q type %q", fe.Field, fe.Type, err, c.field, c.typ)
			}
			if c.field != "" && !strings.HasPrefix(err.Error(), c.field+": ") {
				t.Fatalf("message %q does not start with the field name", err)
			}
		})
	}
}

func TestDecodeAcceptsLaxForms(t *testing.T) {
	cases := []struct{ name, body, want string }{
		// pydantic reads an integral float as an int.
		{"integral float seq", strings.Replace(baseStart, `"seq":1`, `"seq":7.0`, 1), `"seq":7,`},
		// Duplicate keys: the last wins, as in Python's json and dict.
		{"duplicate keys", baseStart + `,"data":{"a":1,"a":2},"span_id":"t"`, `"data":{"a":2}`},
		{"duplicate span_id", baseStart + `,"span_id":"t"`, `"span_id":"t"`},
		{"naive ts kept naive", strings.Replace(baseStart, `2026-03-14T15:09:26Z`, `2026-03-14T15:09:26.25`, 1), `"ts":"2026-03-14T15:09:26.250000"`},
		{"space separator and minutes-only offset", strings.Replace(baseStart, `2026-03-14T15:09:26Z`, `2026-03-14 15:09+0100`, 1), `"ts":"2026-03-14T15:09:00+01:00"`},
		{"escaped key", strings.Replace(baseStart, `"seq":1`, `"\u0073eq":3`, 1), `"seq":3,`},
		{"-0 integer in data", baseStart + `,"data":{"z":-0,"f":-0.0,"e":1E2}`, `"data":{"e":100.0,"f":-0.0,"z":0}`},
		// A tag with escapes is the same string to pydantic.
		{"escaped phase", strings.Replace(baseStart, `"phase":"start"`, `"phase":"st\u0061rt"`, 1), `"phase":"start"`},
		{"escaped finish phase", strings.Replace(baseStart, `"phase":"start"`, `"phase":"\u0066inish","ok":true,"duration_ms":1`, 1), `"phase":"finish"`},
		{"escaped slash", baseStart + `,"data":{"u":"a\/b"}`, `"data":{"u":"a/b"}`},
		// The integer -0 is 0, so duration_ms 0.0, as pydantic reads it; the
		// float -0.0 keeps its sign.
		{"-0 integer duration", strings.Replace(baseStart, `"phase":"start"`, `"phase":"finish","ok":true,"duration_ms":-0`, 1), `"duration_ms":0.0,`},
		{"-0.0 float duration", strings.Replace(baseStart, `"phase":"start"`, `"phase":"finish","ok":true,"duration_ms":-0.0`, 1), `"duration_ms":-0.0,`},
		{"-0e0 float duration", strings.Replace(baseStart, `"phase":"start"`, `"phase":"finish","ok":true,"duration_ms":-0e0`, 1), `"duration_ms":-0.0,`},
		{"4,300 characters of negative integer", baseStart + `,"data":{"x":-` + strings.Repeat("9", 4299) + `},"other":-` + strings.Repeat("9", 4299), `"data":{"x":-` + strings.Repeat("9", 4299) + `}`},
		{"4,300 digits of integer", baseStart + `,"data":{"x":` + strings.Repeat("9", 4300) + `}`, `"data":{"x":` + strings.Repeat("9", 4300) + `}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, err := auditevent.Decode([]byte("{" + c.body + "}"))
			if err != nil {
				t.Fatal(err)
			}
			if line := string(auditevent.Line(&ev)); !strings.Contains(line, c.want) {
				t.Fatalf("line %s lacks %s", line, c.want)
			}
		})
	}
}

func TestDecodeDefaults(t *testing.T) {
	body := `{"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","seq":1,"op":"exec","phase":"start","span_id":"s"}`
	fixed := uuid.MustParse("11111111-2222-4333-8444-555555555555")
	now := time.Date(2026, 3, 14, 15, 9, 26, 123456789, time.UTC)
	var ev auditevent.Event
	opts := auditevent.DecodeOptions{Now: func() time.Time { return now }, NewID: func() (uuid.UUID, error) { return fixed, nil }}
	if err := opts.DecodeInto([]byte(body), &ev); err != nil {
		t.Fatal(err)
	}
	want := `{"data":{},"event_id":"11111111-2222-4333-8444-555555555555","op":"exec","parent_span_id":null,"phase":"start","seq":1,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"s","trace_id":null,"ts":"2026-03-14T15:09:26.123456Z","version":1}` + "\n"
	if got := string(auditevent.Line(&ev)); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Without options, each event gets a fresh random id.
	a, _ := auditevent.Decode([]byte(body))
	b, _ := auditevent.Decode([]byte(body))
	if a.EventID == b.EventID || a.EventID.Version() != 4 {
		t.Fatalf("default event ids %s, %s: want distinct uuid4s", a.EventID, b.EventID)
	}
}
