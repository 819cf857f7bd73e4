package auditevent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/conformance"
)

// TestLineLenIsTheLinesLength: for every conformance event under each
// policy shape, LineLen counts exactly the bytes AppendLine writes, so the
// exporter's max_line_bytes check refuses what would be too long and
// nothing else.
func TestLineLenIsTheLinesLength(t *testing.T) {
	vectors, err := conformance.LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	policies := []auditevent.Policy{
		auditevent.DefaultPolicy(),
		{IncludeExecOutput: true, MaxStdoutChars: 3, MaxStderrChars: 8000},
		{IncludeExecOutput: true, MaxStdoutChars: 8000, MaxStderrChars: 8000, IncludeWriteLen: false},
	}
	checked := 0
	for _, v := range vectors {
		if v.Kind != "encode" && v.Kind != "policy" {
			continue
		}
		ev, err := auditevent.Decode([]byte(v.Input))
		if err != nil {
			continue
		}
		ev.StdoutBytes = []byte("out \x7f\xff é")
		for _, p := range policies {
			if got, want := p.LineLen(&ev), len(p.AppendLine(nil, &ev)); got != want {
				t.Fatalf("%s under %+v: LineLen %d, line %d bytes", v.Name, p, got, want)
			}
		}
		if bound, n := auditevent.LineBound(&ev), auditevent.EncodedLen(&ev); bound < n {
			t.Fatalf("%s: LineBound %d under EncodedLen %d", v.Name, bound, n)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no conformance event checked")
	}
	big := auditevent.Event{Op: "write", Data: auditevent.MustParseData(`{"bytes":12,"path":"/a"}`)}
	for _, p := range policies {
		if got, want := p.LineLen(&big), len(p.AppendLine(nil, &big)); got != want {
			t.Fatalf("write event under %+v: LineLen %d, line %d bytes", p, got, want)
		}
	}
}

// TestDataLimitStopsBeforeBuilding: text whose escapes would pass the
// limit is refused with a *TooLongError, whatever its own length.
func TestDataLimitStopsBeforeBuilding(t *testing.T) {
	dels := `{"path":"` + "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f" + `"}`
	if _, err := auditevent.ParseDataStringLimit(dels, 60); err == nil {
		t.Fatal("10 DEL bytes (60 escaped) passed a limit of 60 with their key")
	} else if _, ok := err.(*auditevent.TooLongError); !ok {
		t.Fatalf("error %T %v, want *TooLongError", err, err)
	}
	d, err := auditevent.ParseDataStringLimit(dels, 100)
	if err != nil || len(d.Bytes()) != 9+60+2 {
		t.Fatalf("within the limit: %v, %d bytes", err, len(d.Bytes()))
	}
	if _, err := auditevent.ParseDataStringLimit(`{"n":1e15}`, 12); err == nil {
		t.Fatal("1e15 (18 bytes canonical) passed a limit of 12")
	}
}

// DecodeOptions.MaxDataBytes refuses data to canonicalize that would pass
// it, naming data, and leaves data that fits as it was.
func TestDecodeMaxDataBytes(t *testing.T) {
	ev := func(path string) string {
		return `{"version":1,"session_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","seq":1,"op":"write","phase":"start","span_id":"s","data":{"path":"` + path + `"}}`
	}
	opts := auditevent.DecodeOptions{MaxDataBytes: 100}
	var e auditevent.Event
	err := opts.DecodeInto([]byte(ev(strings.Repeat("\x7f", 20))), &e) // 131 bytes canonical
	var tl *auditevent.TooLongError
	if !errors.As(err, &tl) || tl.Field != "data" || tl.Limit != 100 {
		t.Fatalf("20 DEL bytes under a limit of 100: %v", err)
	}
	if err := opts.DecodeInto([]byte(ev(strings.Repeat("\x7f", 10))), &e); err != nil || len(e.Data.Bytes()) != 71 {
		t.Fatalf("10 DEL bytes: %v, %d bytes", err, len(e.Data.Bytes()))
	}
}
