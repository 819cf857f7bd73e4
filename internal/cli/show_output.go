package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"golang.org/x/term"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
	"github.com/sandboxaudit/sandboxaudit/internal/trail"
)

// opWriter writes show's operations in one output format.
type opWriter interface {
	reset(w *bufio.Writer)
	needsLines() bool
	needsWhat() bool // Op.What, the command or path
	op(o *trail.Op) error
	end(st trail.Stats) error
}

func newOpWriter(format string, stdout io.Writer) (opWriter, error) {
	switch format {
	case "table":
		return &tableWriter{color: colorOn(stdout)}, nil
	case "jsonl":
		return &jsonlWriter{}, nil
	case "json":
		return &jsonWriter{}, nil
	}
	return nil, fmt.Errorf("%q is not table, jsonl or json", displayText(format))
}

// colorOn reports whether w is a terminal that wants color (NO_COLOR unset).
func colorOn(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// Column widths of the table; longer fields are cut with "…".
const (
	colTime     = 27
	colSeq      = 7
	colOp       = 20
	colWhat     = 44
	colResult   = 28
	colExit     = 5
	colDuration = 10
	// colTrace bounds a trace id in a heading: an OTel id takes 32, and
	// the receiver takes any string, which could flood the terminal.
	colTrace = 64
)

const (
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiBold   = "\x1b[1m"
	ansiReset  = "\x1b[0m"
)

// tableWriter writes one aligned row per operation, under a heading per
// session.
type tableWriter struct {
	w       *bufio.Writer
	color   bool
	session uuid.UUID
	trace   string // the trace the rows are shown under
	any     bool
	buf     []byte // the row being written
}

func (t *tableWriter) reset(w *bufio.Writer) { t.w = w }
func (t *tableWriter) needsLines() bool      { return false }
func (t *tableWriter) needsWhat() bool       { return true }

func (t *tableWriter) op(o *trail.Op) error {
	if !t.any || uuid.UUID(o.Session) != t.session {
		t.heading(o)
	} else if o.TraceID != t.trace {
		t.traceLine(o.TraceID)
	}
	b := t.buf[:0]
	switch {
	case t.color && o.Failed():
		b = append(b, ansiRed...)
	case t.color && (o.Open() || o.Start == nil):
		b = append(b, ansiYellow...)
	}
	colored := len(b) > 0
	b = t.appendRow(b, o)
	if colored {
		b = append(b, ansiReset...)
	}
	t.buf = append(b, '\n')
	_, err := t.w.Write(t.buf)
	return err
}

// appendRow appends the columns of one operation, each cut to its width,
// separated by one space, without trailing spaces.
func (t *tableWriter) appendRow(b []byte, o *trail.Op) []byte {
	first := o.First()
	start := len(b)
	b = appendCell(b, first.TS, colTime)
	b = append(b, ' ')
	var digits, seq [24]byte
	b = appendCell(b, string(appendRight(seq[:0], strconv.AppendInt(digits[:0], first.Seq, 10), colSeq)), colSeq)
	b = append(b, ' ')
	b = appendCell(b, o.Op, colOp)
	b = append(b, ' ')
	b = appendCell(b, o.What, colWhat)
	b = append(b, ' ')
	b = appendResult(b, o)
	b = append(b, ' ')
	var exit, dur []byte
	if o.Finish != nil {
		exit = []byte(o.Finish.Exit) // does not escape: no copy
		if !plainASCII(o.Finish.Exit) || len(exit) > colExit {
			exit = []byte(displayCut(o.Finish.Exit, colExit))
		}
		dur = appendDuration(digits[:0], o.Finish.DurationMS)
	}
	b = appendRight(b, exit, colExit)
	b = append(b, ' ')
	b = appendRight(b, dur, colDuration)
	for len(b) > start && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// appendResult appends resultText(o) as a cell, without building it.
func appendResult(b []byte, o *trail.Op) []byte {
	if o.Finish == nil || o.Start == nil || o.Finish.OK || o.Finish.ErrorCode == "" {
		return appendCell(b, resultText(o), colResult)
	}
	return appendCell(b, "FAIL "+o.Finish.ErrorCode, colResult)
}

// traceLine names the trace of the rows that follow, within a session
// whose operations belong to several traces.
func (t *tableWriter) traceLine(trace string) {
	t.trace = trace
	h := "  no trace"
	if trace != "" {
		h = "  trace " + displayCut(trace, colTrace)
	}
	t.boldLine(h)
}

// boldLine writes a heading line, in bold when the output is colored.
func (t *tableWriter) boldLine(h string) {
	if t.color {
		h = ansiBold + h + ansiReset
	}
	_, _ = t.w.WriteString(h + "\n")
}

func (t *tableWriter) heading(o *trail.Op) {
	if t.any {
		_ = t.w.WriteByte('\n')
	}
	t.any, t.session, t.trace = true, o.Session, o.TraceID
	h := "session " + uuid.UUID(o.Session).String()
	if o.TraceID != "" {
		h += "  trace " + displayCut(o.TraceID, colTrace)
	}
	t.boldLine(h)
	_, _ = t.w.WriteString(strings.TrimRight(strings.Join([]string{
		pad("TIME", colTime), fmt.Sprintf("%*s", colSeq, "SEQ"), pad("OP", colOp), pad("COMMAND/PATH", colWhat),
		pad("RESULT", colResult), fmt.Sprintf("%*s", colExit, "EXIT"), fmt.Sprintf("%*s", colDuration, "DURATION"),
	}, " "), " ") + "\n")
}

// resultText is ok, the error code of a failure, or what is missing.
func resultText(o *trail.Op) string {
	switch {
	case o.Start == nil && o.Failed():
		return strings.TrimSpace("NO START; FAIL " + displayText(o.Finish.ErrorCode))
	case o.Start == nil:
		return "NO START (finish only)"
	case o.Finish == nil:
		return "OPEN (no finish)"
	case o.Finish.OK:
		return "ok"
	case o.Finish.ErrorCode != "":
		return "FAIL " + displayText(o.Finish.ErrorCode)
	}
	return "FAIL"
}

// appendDuration appends ms in the largest unit that keeps it short; a
// value too long for its column (duration_ms is any finite number) in
// two digits and an exponent, or one when a minus sign leaves no room.
func appendDuration(b []byte, ms float64) []byte {
	v, unit, prec := ms, "ms", 1
	switch {
	case ms >= 60_000:
		v, unit = ms/60_000, "m"
	case ms >= 1000:
		v, unit, prec = ms/1000, "s", 2
	}
	n := len(b)
	if b = append(strconv.AppendFloat(b, v, 'f', prec, 64), unit...); len(b)-n > colDuration {
		b = append(strconv.AppendFloat(b[:n], v, 'g', 2, 64), unit...)
	}
	if len(b)-n > colDuration { // -1.7e+300ms
		b = append(strconv.AppendFloat(b[:n], v, 'g', 1, 64), unit...)
	}
	return b
}

func (t *tableWriter) end(st trail.Stats) error {
	if t.any {
		_ = t.w.WriteByte('\n')
	}
	_, err := fmt.Fprintf(t.w, "%s: %d failed, %d open\n", plural.Count(st.Ops, "operation"), st.Failed, st.Open)
	return err
}

// jsonlWriter writes each operation's lines as they are in the trail:
// start, then finish.
type jsonlWriter struct{ w *bufio.Writer }

func (j *jsonlWriter) reset(w *bufio.Writer) { j.w = w }
func (j *jsonlWriter) needsLines() bool      { return true }
func (j *jsonlWriter) needsWhat() bool       { return false }
func (j *jsonlWriter) end(trail.Stats) error { return nil }

func (j *jsonlWriter) op(o *trail.Op) error {
	for _, e := range [...]*trail.Event{o.Start, o.Finish} {
		if e == nil {
			continue
		}
		if _, err := j.w.Write(e.Line); err != nil {
			return err
		}
		if n := len(e.Line); n > 0 && e.Line[n-1] != '\n' {
			_ = j.w.WriteByte('\n') // a torn last line, still an event
		}
	}
	return nil
}

// jsonWriter writes a JSON array of operations, each holding its two
// events as they are in the trail (null when missing).
type jsonWriter struct {
	w *bufio.Writer
	n int
}

func (j *jsonWriter) reset(w *bufio.Writer) { j.w = w }
func (j *jsonWriter) needsLines() bool      { return true }
func (j *jsonWriter) needsWhat() bool       { return false }

func (j *jsonWriter) op(o *trail.Op) error {
	sep := "[\n"
	if j.n > 0 {
		sep = ",\n"
	}
	j.n++
	_, _ = j.w.WriteString(sep)
	_, _ = fmt.Fprintf(j.w, `{"session_id":"%s","span_id":%s,"trace_id":%s,"op":"%s","open":%t,"failed":%t,"start":%s,"finish":%s}`,
		uuid.UUID(o.Session).String(), jsonString(o.SpanID), jsonNullable(o.TraceID), o.Op, o.Open(), o.Failed(),
		eventJSON(o.Start), eventJSON(o.Finish))
	return nil
}

func (j *jsonWriter) end(trail.Stats) error {
	if j.n == 0 {
		_, err := j.w.WriteString("[]\n")
		return err
	}
	_, err := j.w.WriteString("\n]\n")
	return err
}

// eventJSON is an event's line as JSON text for a terminal: a line not in
// canonical form may hold characters that act on one (see jsonString).
func eventJSON(e *trail.Event) string {
	if e == nil {
		return "null"
	}
	return safetext.EscapeJSON(strings.TrimSuffix(string(e.Line), "\n"))
}

// jsonString quotes s as JSON (Go's %q is not JSON for every input), with
// the characters that act on a terminal or hide there (C1 controls, bidi
// overrides, …) as JSON escapes: the same value, shown safely.
func jsonString(s string) string {
	b, _ := jsonMarshalString(s)
	return safetext.EscapeJSON(b)
}

func jsonNullable(s string) string {
	if s == "" {
		return "null"
	}
	return jsonString(s)
}
