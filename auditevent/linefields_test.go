package auditevent_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// checkScanLine compares ScanLine with the full decode on one input: a
// line ScanLine accepts must decode, to the same value in every field
// ScanLine reads.
func checkScanLine(t *testing.T, in []byte) bool {
	t.Helper()
	var f auditevent.LineFields
	if !auditevent.ScanLine(in, &f) {
		return false
	}
	ev, err := auditevent.Decode(in)
	if err != nil {
		t.Fatalf("ScanLine accepted a line the decoder refuses (%v): %q", err, in)
	}
	trace := ""
	if ev.TraceID != nil {
		trace = *ev.TraceID
	}
	code := ""
	if ev.ErrorCode != nil {
		code = *ev.ErrorCode
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"phase", f.Phase, ev.Phase},
		{"event_id", f.EventID, ev.EventID},
		{"ts", string(f.TS), ev.TS.String()},
		{"ts micros", f.TSMicros, ev.TS.UnixMicro()},
		{"session_id", f.SessionID, ev.SessionID},
		{"seq", f.Seq, ev.Seq},
		{"op", f.Op, ev.Op},
		{"span_id", string(f.SpanID), ev.SpanID},
		{"trace_id", string(f.TraceID), trace},
		{"trace_id null", f.TraceID == nil, ev.TraceID == nil},
		{"data", string(f.Data), ev.Data.String()},
		{"ok", f.OK, ev.OK},
		{"duration_ms", math.Float64bits(f.DurationMS), math.Float64bits(ev.DurationMS)},
		{"error_code", f.ErrorCode, code},
	} {
		if c.got != c.want {
			t.Fatalf("%s: ScanLine read %v, the decoder %v, in %q", c.name, c.got, c.want, in)
		}
	}
	checkDataMembers(t, &f)
	for _, p := range []struct {
		name string
		view []byte
		at   int
	}{{"ts", f.TS, f.TSAt}, {"span_id", f.SpanID, f.SpanIDAt}, {"trace_id", f.TraceID, f.TraceIDAt}, {"data", f.Data, f.DataAt}} {
		if p.view != nil && (p.at < 0 || p.at+len(p.view) > len(in) || string(in[p.at:p.at+len(p.view)]) != string(p.view)) {
			t.Fatalf("%s: position %d does not hold %q in %q", p.name, p.at, p.view, in)
		}
	}
	return true
}

// checkDataMembers compares LineFields.DataMember with encoding/json's
// reading of data's members, and of a few names data may lack.
func checkDataMembers(t *testing.T, f *auditevent.LineFields) {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(f.Data, &members); err != nil {
		t.Fatalf("data %q: %v", f.Data, err)
	}
	for k, v := range members {
		from, to, ok, known := f.DataMember(k)
		if !known && len(members) <= 8 {
			t.Fatalf("DataMember(%q) not known in %q", k, f.Data)
		}
		if known && (!ok || string(f.Data[from:to]) != string(v)) {
			t.Fatalf("DataMember(%q) = %d, %d, %v in %q; want %s", k, from, to, ok, f.Data, v)
		}
	}
	for _, k := range []string{"", "command", "exit_code", "path", "port", "zzz"} {
		if _, in := members[k]; !in {
			if _, _, ok, _ := f.DataMember(k); ok {
				t.Fatalf("DataMember(%q) found in %q", k, f.Data)
			}
		}
	}
}

// FuzzScanLine: whatever ScanLine accepts, the full decode accepts with the
// same fields; and the canonical line of whatever the decoder accepts goes
// through ScanLine the same way.
func FuzzScanLine(f *testing.F) {
	for _, body := range []string{benchStartBody, benchFinishBody} {
		ev, err := auditevent.Decode([]byte(body))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(auditevent.Line(&ev))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkScanLine(t, in)
		if ev, err := auditevent.Decode(in); err == nil {
			checkScanLine(t, auditevent.Line(&ev))
		}
	})
}

// TestScanLineVectors reads every conformance vector's canonical line: all
// go through ScanLine (the form the collector writes never needs the full
// decode), with the decoder's values.
func TestScanLineVectors(t *testing.T) {
	f, err := os.Open("../testdata/conformance/events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	n := 0
	for sc.Scan() {
		var v struct{ Kind, Expect string }
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		if v.Kind != "encode" && v.Kind != "policy" {
			continue
		}
		line := []byte(v.Expect)
		ev, err := auditevent.Decode(line)
		if err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if ev.TraceID != nil && strings.ContainsAny(*ev.TraceID, "\"\\\x7f") || strings.ContainsAny(ev.SpanID, "\"\\\x7f") {
			continue // escaped ids take the full decode
		}
		if !checkScanLine(t, line) && !bytes.Contains(line, []byte(`\u`)) {
			t.Errorf("canonical line refused: %s", line)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("only %d vectors read", n)
	}
}

// TestScanLineRefuses lists lines ScanLine leaves to the full decode: not
// canonical, or canonical but not an event, or needing a default.
func TestScanLineRefuses(t *testing.T) {
	ev, err := auditevent.Decode([]byte(benchFinishBody))
	if err != nil {
		t.Fatal(err)
	}
	good := string(auditevent.Line(&ev))
	if !checkScanLine(t, []byte(good)) {
		t.Fatalf("refused %s", good)
	}
	deep := strings.Repeat("[", 199) + strings.Repeat("]", 199)
	for name, line := range map[string]string{
		"space after a colon":      strings.Replace(good, `"op":"exec"`, `"op": "exec"`, 1),
		"keys out of order":        strings.Replace(good, `{"data":{`, `{"zz":1,"data":{`, 1),
		"repeated key":             strings.Replace(good, `"op":"exec"`, `"op":"exec","op":"exec"`, 1),
		"carriage return":          strings.TrimSuffix(good, "\n") + "\r\n",
		"unknown op":               strings.Replace(good, `"op":"exec"`, `"op":"exek"`, 1),
		"unknown error code":       strings.Replace(good, `"error_code":null`, `"error_code":"nope"`, 1),
		"ok a string":              strings.Replace(good, `"ok":true`, `"ok":"true"`, 1),
		"no ts (a default)":        strings.Replace(good, `,"ts":"2026-03-14T15:09:26.786022Z"`, ``, 1),
		"ts not canonical":         strings.Replace(good, `26.786022Z`, `26.786022+00:00`, 1),
		"escaped span id":          strings.Replace(good, `"span_id":"sandbox_op_`, `"span_id":"sandbox\"op_`, 1),
		"seq with a fraction":      strings.Replace(good, `"seq":2`, `"seq":2.5`, 1),
		"data nested too deep":     strings.Replace(good, `{"data":{`, `{"data":{"a":`+deep+`,`, 1),
		"stdout a number":          strings.Replace(good, `"stdout":null`, `"stdout":1`, 1),
		"duration_ms not a number": strings.Replace(good, `"duration_ms":250.125`, `"duration_ms":"250.125"`, 1),
		"second value":             strings.TrimSuffix(good, "\n") + "{}",
	} {
		if line == good {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if checkScanLine(t, []byte(line)) {
			t.Errorf("%s: accepted %q", name, line)
		}
	}
	// A start ignores the finish fields, as the decoder does.
	start := strings.Replace(good, `"phase":"finish"`, `"phase":"start"`, 1)
	start = strings.Replace(start, `"ok":true`, `"ok":"yes"`, 1)
	if !checkScanLine(t, []byte(start)) {
		t.Errorf("start with a finish field of another type refused")
	}
}

func BenchmarkScanLine(b *testing.B) {
	var lines [][]byte
	for _, body := range []string{benchStartBody, benchFinishBody} {
		ev, err := auditevent.Decode([]byte(body))
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, auditevent.Line(&ev))
	}
	b.SetBytes(int64(len(bytes.Join(lines, nil))))
	b.Run("ScanLine", func(b *testing.B) {
		var f auditevent.LineFields
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				if !auditevent.ScanLine(l, &f) {
					b.Fatal("refused")
				}
			}
		}
	})
	b.Run("DecodeString", func(b *testing.B) {
		var ev auditevent.Event
		strs := []string{string(lines[0]), string(lines[1])}
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range strs {
				if err := (auditevent.DecodeOptions{}).DecodeStringInto(l, &ev); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
