package payloadpolicy

import (
	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// Policy is the effective payload policy at one sink for one op: the
// fields of docs/format.md, "The payload policy", then redaction.
type Policy struct {
	auditevent.Policy
	// Redactor cuts secrets; nil when the policy turns redaction off.
	Redactor *redact.Redactor
}

func (p Policy) equal(o Policy) bool {
	if p.Policy != o.Policy || (p.Redactor == nil) != (o.Redactor == nil) {
		return false
	}
	return p.Redactor == nil || p.Redactor.Settings().Equal(o.Redactor.Settings())
}

// Apply returns a copy of e under the policy: the payload policy first, then
// every string of data, error_message, error_type, stdout/stderr where the
// policy keeps them, and the span and trace ids (redact.Redactor.ID),
// redacted. Raw output is redacted as it is decoded (see
// redact.Redactor.Output), and a redacted copy holds no raw bytes. e is not
// modified. c counts the cuts by kind.
func (p Policy) Apply(e *auditevent.Event, c *redact.Counts) auditevent.Event {
	r := p.Redactor
	if r == nil {
		return p.Policy.Apply(e)
	}
	src := *e
	var rawOut, rawErr []byte
	if e.IsFinish() && p.IncludeExecOutput {
		// Decoded below with the redaction, instead of by the policy.
		rawOut, rawErr = e.StdoutBytes, e.StderrBytes
		src.StdoutBytes, src.StderrBytes = nil, nil
	}
	out := p.Policy.Apply(&src)
	out.StdoutBytes, out.StderrBytes = nil, nil
	out.Stdout = output(r, rawOut, out.Stdout, p.MaxStdoutChars, c)
	out.Stderr = output(r, rawErr, out.Stderr, p.MaxStderrChars, c)
	out.Data, _ = r.Data(out.Data, c)
	out.ErrorMessage = r.Ptr(out.ErrorMessage, c)
	out.ErrorType = r.Ptr(out.ErrorType, c)
	out.SpanID, _ = r.ID(out.SpanID, c)
	out.ParentSpanID = r.IDPtr(out.ParentSpanID, c)
	out.TraceID = r.IDPtr(out.TraceID, c)
	return out
}

// output is a stream's text: raw bytes decoded and redacted, or else the
// existing text redacted.
func output(r *redact.Redactor, raw []byte, text *string, maxChars int, c *redact.Counts) *string {
	if raw == nil {
		return r.Ptr(text, c)
	}
	s := r.Output(raw, maxChars, c)
	return &s
}

// AppendLine appends the canonical line of Apply's copy to dst. Without
// redaction the policy is applied while encoding, so the event is not
// copied.
func (p Policy) AppendLine(dst []byte, e *auditevent.Event, c *redact.Counts) []byte {
	return p.AppendSpanLine(dst, e, c, nil)
}

// AppendSpanLine is AppendLine with the fields e shares with the line sl
// saw last copied from it (see auditevent.SpanLines); sl may be nil.
func (p Policy) AppendSpanLine(dst []byte, e *auditevent.Event, c *redact.Counts, sl *auditevent.SpanLines) []byte {
	if !p.Redacts(e) {
		return p.Policy.AppendSpanLine(dst, e, sl)
	}
	out := p.Apply(e, c)
	return auditevent.AppendSpanLine(dst, &out, sl)
}

// nothingToCut reports whether Apply would leave every field the line
// holds as the policy alone makes it, and count no cut: no error message,
// no error type, no output kept, ids as tracers make them, and data the
// redactor cannot cut. Most events are so, and are then encoded without the
// copies Apply makes.
func (p Policy) nothingToCut(e *auditevent.Event) bool {
	if e.ErrorMessage != nil || e.ErrorType != nil || !p.IncludeWriteLen || !plainIDs(e) {
		return false
	}
	if e.IsFinish() {
		if p.IncludeExecOutput {
			return false
		}
	} else if e.Stdout != nil || e.Stderr != nil {
		return false
	}
	return !p.Redactor.MayCut(e.Data)
}

// plainIDs reports whether every id of e is one redact.Redactor.ID leaves
// whole without a scan.
func plainIDs(e *auditevent.Event) bool {
	return redact.PlainID(e.SpanID) && (e.ParentSpanID == nil || redact.PlainID(*e.ParentSpanID)) &&
		(e.TraceID == nil || redact.PlainID(*e.TraceID))
}

// Redacts reports whether AppendLine encodes Apply's copy of e, rather
// than e under the payload policy alone.
func (p Policy) Redacts(e *auditevent.Event) bool {
	return p.Redactor != nil && !p.nothingToCut(e)
}

// LineLen is the length of the line AppendLine writes for e, newline
// included. A marker can be longer than what it cuts, so when the policy
// may cut, the redacted copy is measured.
func (p Policy) LineLen(e *auditevent.Event) int {
	if !p.Redacts(e) {
		return p.Policy.LineLen(e)
	}
	var c redact.Counts
	out := p.Apply(e, &c)
	return auditevent.EncodedLen(&out) + 1
}

// Growth is the most the policy's redaction can multiply a line's length
// by: 1 without redaction.
func (p Policy) Growth() int {
	if p.Redactor == nil {
		return 1
	}
	return redact.MaxMarkerLen()
}
