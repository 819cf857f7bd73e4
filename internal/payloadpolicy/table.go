package payloadpolicy // import "github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"

import (
	"fmt"
	"maps"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// Table is the effective policy of every op, resolved once: a component's
// config never changes while it runs.
type Table struct {
	byOp   map[string]Policy
	other  Policy // for an op outside format version 1
	growth int    // the largest Growth of any op's policy
}

// NewTable resolves set for every op of format version 1, building one
// redactor per distinct redact policy. An error names the redact key; the
// config's Validate reports the same errors first, at start.
func NewTable(set auditevent.PolicySet) (*Table, error) {
	b := tableBuilder{set: set}
	other, err := b.resolve("")
	if err != nil {
		return nil, err
	}
	t := &Table{byOp: make(map[string]Policy, len(auditevent.Ops())), other: other, growth: other.Growth()}
	for _, op := range auditevent.Ops() {
		if t.byOp[op], err = b.resolve(op); err != nil {
			return nil, err
		}
		t.growth = max(t.growth, t.byOp[op].Growth())
	}
	return t, nil
}

// tableBuilder shares a redactor between the ops whose settings agree.
type tableBuilder struct {
	set   auditevent.PolicySet
	built []*redact.Redactor
}

func (b *tableBuilder) resolve(op string) (Policy, error) {
	p := Policy{Policy: b.set.Resolve(op)}
	s := RedactSettings(b.set, op)
	if !s.Enabled {
		return p, nil
	}
	for _, r := range b.built {
		if r.Settings().Equal(s) {
			p.Redactor = r
			return p, nil
		}
	}
	r, err := redact.New(s)
	if err != nil {
		return Policy{}, fmt.Errorf("redact: %w", err)
	}
	b.built = append(b.built, r)
	p.Redactor = r
	return p, nil
}

// RedactSettings merges the redact sections of set's levels for op over
// the default (on, built-in detectors only).
func RedactSettings(set auditevent.PolicySet, op string) redact.Settings {
	s := redact.DefaultSettings().Merge(set.Default.Redact)
	if o, ok := set.ByOp[op]; ok {
		s = s.Merge(o.Redact)
	}
	return s.Merge(set.Sink.Redact)
}

// Get is the effective policy for an event of op.
func (t *Table) Get(op string) Policy {
	if p, ok := t.byOp[op]; ok {
		return p
	}
	return t.other
}

// Growth is the most any op's policy can multiply a line's length by
// (Policy.Growth).
func (t *Table) Growth() int { return t.growth }

// Equal reports whether t and o give every op the same policy.
func (t *Table) Equal(o *Table) bool {
	return t.other.equal(o.other) && maps.EqualFunc(t.byOp, o.byOp, Policy.equal)
}

// RedactionOff lists the ops (format version 1) whose policy does not
// redact, for the warning at start.
func (t *Table) RedactionOff() []string {
	var off []string
	for _, op := range auditevent.Ops() {
		if t.byOp[op].Redactor == nil {
			off = append(off, op)
		}
	}
	return off
}
