package sandboxauditexporter

import (
	"unsafe"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// measured holds the redacted copies checkLines made to measure a push's
// largest events against max_line_bytes, so that the sinks encode those
// copies instead of redacting the events again. It holds at most budget
// bytes of encoded copies; an event past that is redacted again when
// written. The copies are looked up by key: their number grows with the
// push (redaction can shrink a large event to a short line), and every
// event of the push is looked up.
type measured struct {
	copies map[copyKey]*measuredCopy
	budget int
}

// copyKey names an event under one sink's policies.
type copyKey struct {
	policies *payloadpolicy.Table
	ref      eventRef
}

// measuredCopy is an event's redacted copy and the cuts that made it.
type measuredCopy struct {
	out  auditevent.Event
	cuts redact.Counts
}

// eventRef names an event across copies of its struct (the duplicate
// filters copy the events they keep): its ids and where its payloads
// are held, which no other event of the push shares.
type eventRef struct {
	id                   uuid.UUID
	phase                auditevent.Phase
	seq                  int64
	data, rawOut, rawErr *byte
	msg, out, err        *string
}

func refOf(ev *auditevent.Event) eventRef {
	return eventRef{
		id: ev.EventID, phase: ev.Phase, seq: ev.Seq,
		data: unsafe.SliceData(ev.Data.Bytes()), rawOut: unsafe.SliceData(ev.StdoutBytes), rawErr: unsafe.SliceData(ev.StderrBytes),
		msg: ev.ErrorMessage, out: ev.Stdout, err: ev.Stderr,
	}
}

// lineLen is the length of ev's line under pol, newline excluded; when pol
// redacts ev, the redacted copy is measured and kept, within the budget.
func (m *measured) lineLen(policies *payloadpolicy.Table, pol payloadpolicy.Policy, ev *auditevent.Event) int {
	if !pol.Redacts(ev) {
		return pol.Policy.LineLen(ev) - 1
	}
	k := copyKey{policies, refOf(ev)}
	if c := m.copies[k]; c != nil {
		// An event listed twice redacts the same: one copy serves both.
		return auditevent.EncodedLen(&c.out)
	}
	c := &measuredCopy{}
	c.out = pol.Apply(ev, &c.cuts)
	n := auditevent.EncodedLen(&c.out)
	if n <= m.budget {
		m.budget -= n
		m.copies[k] = c
	}
	return n
}

// appendLine appends ev's line under the sink's policies: the measured
// copy's, counting its cuts, when there is one.
func (m *measured) appendLine(dst []byte, policies *payloadpolicy.Table, pol payloadpolicy.Policy, ev *auditevent.Event, cuts *redact.Counts, sl *auditevent.SpanLines) []byte {
	if m != nil && len(m.copies) > 0 {
		if c := m.copies[copyKey{policies, refOf(ev)}]; c != nil {
			if cuts != nil {
				cuts.Add(&c.cuts)
			}
			return auditevent.AppendSpanLine(dst, &c.out, sl)
		}
	}
	return pol.AppendSpanLine(dst, ev, cuts, sl)
}
