package trail

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/maphash"
	"strconv"
	"strings"
	"unsafe"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
)

// maxWhat bounds the command or path text carried per event; the table
// cuts far shorter, and serve shows the full data from the lines. A cut
// text ends in "…", so that what it leaves out is not read as absent.
const maxWhat = 1024

// badReason says why a line is not an event without quoting any of it:
// the field's name when it is one of the event's, and what is wrong with
// it in words of our own (the decoder's messages may quote the value).
func badReason(err error) string {
	var fe *auditevent.FieldError
	if !errors.As(err, &fe) {
		return "not an audit event: not valid JSON"
	}
	what := problemOf(fe.Type)
	if fe.Field != "" && auditevent.IsField(fe.Field) {
		return "not an audit event: field " + fe.Field + ": " + what + " (" + fe.Type + ")"
	}
	return "not an audit event: " + what + " (" + fe.Type + ")"
}

// problemOf words a pydantic error type.
func problemOf(typ string) string {
	switch {
	case typ == "missing":
		return "missing"
	case typ == "json_invalid":
		return "not valid JSON"
	case typ == "model_attributes_type":
		return "not a JSON object"
	case typ == "union_tag_not_found":
		return "no phase"
	case typ == "union_tag_invalid":
		return "phase is neither start nor finish"
	case strings.HasSuffix(typ, "_type"):
		return "wrong type"
	}
	return "invalid value"
}

// decodeLine reads one line (with its newline, if it has one) into r, all
// but opSeq and order. A line in canonical form, as the collector writes
// it, is read by auditevent.ScanLine; any other line is decoded in full,
// which accepts the same lines and words why a line is refused. r's strings
// are views of the line, which must stay unchanged while r is used.
func decodeLine(line []byte, r *rec, e *decoded, keepLine bool, grep [][]byte, seed maphash.Seed) error {
	text := bytes.TrimSuffix(line, []byte("\n"))
	r.light = &e.LineFields
	if !scanLine(text, r, &e.LineFields) {
		r.light = nil
		if err := fullLine(text, r, &e.Event); err != nil {
			return err
		}
	}
	readLine(line, r, keepLine, grep, seed)
	return nil
}

// decodedLine is decodeLine for a line whose event ev was decoded already
// (tornjoin.Find checked it): it is read from ev, not decoded again.
func decodedLine(line []byte, ev *auditevent.Event, r *rec, keepLine bool, grep [][]byte, seed maphash.Seed) {
	r.light = nil
	fromEvent(r, ev)
	readLine(line, r, keepLine, grep, seed)
}

// readLine reads what decodeLine takes from the line itself, once its
// event is read into r.
func readLine(line []byte, r *rec, keepLine bool, grep [][]byte, seed maphash.Seed) {
	text := bytes.TrimSuffix(line, []byte("\n"))
	r.what = "" // set by the caller when the sort needs it
	r.ev.Exit = ""
	r.at[strExit] = 0
	if r.phase == 1 {
		if from, to, ok := r.dataField("exit_code"); ok && string(r.data[from:to]) != "null" {
			r.ev.Exit = view(r.data[from:to])
			if r.dataAt > 0 {
				r.at[strExit] = r.dataAt + from
			}
		}
	}
	r.ev.hash = maphash.Bytes(seed, text)
	r.ev.match = holdsAny(text, grep)
	if keepLine {
		r.ev.Line = line
	}
}

// decoded is a worker's scratch space for decodeLine.
type decoded struct {
	auditevent.LineFields
	auditevent.Event
	what []byte // the command or path, for the record
}

// scanLine is the light read of a canonical line.
func scanLine(text []byte, r *rec, f *auditevent.LineFields) bool {
	if !auditevent.ScanLine(text, f) {
		return false
	}
	r.session = f.SessionID
	r.phase = 0
	if f.Phase == auditevent.PhaseFinish {
		r.phase = 1
	}
	r.spanID, r.traceID, r.op, r.data = view(f.SpanID), view(f.TraceID), f.Op, f.Data
	r.at = [numStrings]int{strTS: f.TSAt + 1, strSpanID: f.SpanIDAt + 1}
	if f.TraceID != nil {
		r.at[strTraceID] = f.TraceIDAt + 1
	}
	r.dataAt = f.DataAt + 1
	r.ev = Event{Seq: f.Seq, TS: view(f.TS), TSMicros: f.TSMicros, OK: f.OK, DurationMS: f.DurationMS, ErrorCode: f.ErrorCode}
	return true
}

// fullLine decodes a line that is not in canonical form, as a view of it.
func fullLine(text []byte, r *rec, e *auditevent.Event) error {
	if err := (auditevent.DecodeOptions{}).DecodeStringInto(view(text), e); err != nil {
		return err
	}
	fromEvent(r, e)
	return nil
}

// fromEvent reads a decoded event into r.
func fromEvent(r *rec, e *auditevent.Event) {
	r.session = e.SessionID
	r.phase = 0
	if e.Phase == auditevent.PhaseFinish {
		r.phase = 1
	}
	r.spanID, r.traceID, r.op, r.data = e.SpanID, "", e.Op, e.Data.Bytes()
	r.at, r.dataAt = [numStrings]int{}, 0 // the decoded text is not the line's
	if e.TraceID != nil {
		r.traceID = *e.TraceID
	}
	r.ev = Event{Seq: e.Seq, TS: e.TS.String(), TSMicros: e.TS.UnixMicro(), OK: e.OK, DurationMS: e.DurationMS}
	if e.ErrorCode != nil {
		r.ev.ErrorCode = *e.ErrorCode
	}
}

// view is b as a string without a copy: b must not change while the
// string is in use.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// dataField is topFieldAt for r.data, from ScanLine's record of data's
// members when it has one.
func (r *rec) dataField(key string) (from, to int, ok bool) {
	if r.light != nil {
		if from, to, ok, known := r.light.DataMember(key); known {
			return from, to, ok
		}
	}
	return topFieldAt(r.data, key)
}

// appendWholeWhat appends the command (exec), path or port an event's
// data d names to dst, with field to find d's members, whole: the text
// --grep reads, which the record carries cut (cutWhat).
func appendWholeWhat(dst, d []byte, field func(key string) (from, to int, ok bool)) []byte {
	for _, key := range [...]string{"command", "path", "port"} {
		if from, to, ok := field(key); ok {
			return appendJSONText(dst, d[from:to])
		}
	}
	return dst
}

// cutWhat cuts what to at most maxWhat bytes on a character boundary,
// ending it in "…" when cut. It may write what's bytes.
func cutWhat(what []byte) []byte {
	if kept := len(clip(view(what), maxWhat)); kept < len(what) {
		return append(what[:kept], "…"...)
	}
	return what
}

// topFieldAt is where the value of a top-level key of a canonical data
// object (keys sorted, no whitespace) sits in d, with false when it is not
// there. Keys are compared unescaped only when they hold no escape, which
// the keys looked for never do.
func topFieldAt(d []byte, key string) (from, to int, ok bool) {
	if len(d) < 2 || d[0] != '{' {
		return 0, 0, false
	}
	i := 1
	for i < len(d) && d[i] == '"' {
		kEnd := stringEnd(d, i)
		if kEnd < 0 || kEnd+1 >= len(d) || d[kEnd+1] != ':' {
			return 0, 0, false
		}
		k := d[i+1 : kEnd]
		vStart := kEnd + 2
		vEnd := valueEnd(d, vStart)
		if vEnd < 0 {
			return 0, 0, false
		}
		if string(k) == key {
			return vStart, vEnd, true
		}
		if string(k) > key {
			return 0, 0, false // sorted: it is not there
		}
		i = vEnd
		if i < len(d) && d[i] == ',' {
			i++
		}
	}
	return 0, 0, false
}

// stringEnd is the index of the quote closing the string opened at i.
func stringEnd(d []byte, i int) int {
	for j := i + 1; j < len(d); j++ {
		switch d[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// valueEnd is the index just past the JSON value starting at i.
func valueEnd(d []byte, i int) int {
	depth := 0
	for j := i; j < len(d); j++ {
		switch d[j] {
		case '"':
			if j = stringEnd(d, j); j < 0 {
				return -1
			}
			if depth == 0 {
				return j + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',':
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// jsonText turns a JSON value into display text: a string unquoted, an
// array of strings joined by spaces, anything else as its JSON.
func jsonText(v []byte) string { return string(appendJSONText(nil, v)) }

// appendJSONText appends jsonText(v) to dst.
func appendJSONText(dst, v []byte) []byte {
	switch {
	case len(v) > 0 && v[0] == '"':
		if bytes.IndexByte(v, '\\') < 0 {
			return append(dst, v[1:len(v)-1]...)
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			return append(dst, s...)
		}
	case len(v) > 0 && v[0] == '[':
		if out, ok := appendPlainStrings(dst, v); ok {
			return out
		}
		var parts []string
		if json.Unmarshal(v, &parts) == nil {
			return append(dst, strings.Join(parts, " ")...)
		}
	}
	return append(dst, v...)
}

// appendPlainStrings reads a JSON array of strings without escapes (the
// common command line) as the parts joined by spaces, without decoding
// it: with no escape, a quote only opens or closes a string.
func appendPlainStrings(dst, v []byte) ([]byte, bool) {
	if bytes.IndexByte(v, '\\') >= 0 || len(v) < 4 || v[1] != '"' || v[len(v)-2] != '"' {
		return dst, len(v) == 2 // [] is the empty command
	}
	inner := v[2 : len(v)-2]
	n := len(dst)
	for {
		i := bytes.IndexByte(inner, '"')
		if i < 0 {
			return append(dst, inner...), true
		}
		if len(inner) < i+3 || inner[i+1] != ',' || inner[i+2] != '"' {
			return dst[:n], false // an element that is not a string
		}
		dst = append(append(dst, inner[:i]...), ' ')
		inner = inner[i+3:]
	}
}

// clip cuts s to at most n bytes on a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }

// grepForms is the text as typed, as a canonical line escapes it
// (non-ASCII as \uXXXX, quotes and backslashes escaped), and, when the
// text is a field as the tools show it (safetext.Escape: \x1b, \u202e,
// \\; grepShown), the shown field as a line escapes it: what a table shows is found.
// Text the tools would show otherwise is not read as a Go literal: C:\x64
// is a path, not C:d. A form that holds one before it is left out: the
// line is searched once for each other.
func grepForms(text string) [][]byte {
	shown := grepShown(text)
	if shown == nil {
		return nil
	}
	forms := shown[:1:1]
	add := func(form string) {
		for _, f := range forms {
			if strings.Contains(form, string(f)) {
				return // a line holding form holds f: looked for already
			}
		}
		forms = append(forms, []byte(form))
	}
	for _, f := range shown {
		add(lineEscaped(string(f)))
	}
	return forms
}

// grepShown is text as typed and, when it reads as an escaped field
// (shownField), as that field: the forms a command or path holds once
// decoded, as the table shows it.
func grepShown(text string) [][]byte {
	if text == "" {
		return nil
	}
	forms := [][]byte{[]byte(text)}
	if raw, ok := shownField(text); ok {
		forms = append(forms, []byte(raw))
	}
	return forms
}

// holdsAny reports whether text holds one of forms.
func holdsAny(text []byte, forms [][]byte) bool {
	for _, f := range forms {
		if bytes.Contains(text, f) {
			return true
		}
	}
	return false
}

// shownField reads text back as the field the tools show that way
// (safetext.Escape's escapes read as a Go string literal's), when it
// holds an escape and the tools would show that field so: C:\x64 is a
// path, not C:d.
func shownField(text string) (string, bool) {
	raw, err := strconv.Unquote(`"` + strings.ReplaceAll(text, `"`, `\"`) + `"`)
	return raw, err == nil && raw != text && safetext.Escape(raw) == text
}

// idForms is an id asked for as typed and as the field it reads as when
// the tools show it escaped (shownField): an id copied from show's table
// or verify's report finds its operation, as --grep's text does.
type idForms [2]string

func newIDForms(id string) idForms {
	f := idForms{id, id}
	if raw, ok := shownField(id); ok {
		f[1] = raw
	}
	return f
}

// match reports whether the id read from a line is the one asked for.
func (f idForms) match(got string) bool { return idMatches(f[0], got) || f[1] != f[0] && f[1] == got }

// lineEscaped is text as a canonical line writes it in a string.
func lineEscaped(text string) string {
	d, err := auditevent.MarshalData(map[string]any{"g": text})
	if err != nil {
		return text
	}
	b := d.Bytes() // {"g":"…"}
	return string(b[6 : len(b)-2])
}
