package payloadpolicy // import "github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"

import (
	"maps"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// Table is the effective policy of every op, resolved once: a component's
// config never changes while it runs.
type Table struct {
	byOp  map[string]auditevent.Policy
	other auditevent.Policy // for an op outside format version 1
}

// NewTable resolves set for every op of format version 1.
func NewTable(set auditevent.PolicySet) *Table {
	t := &Table{byOp: make(map[string]auditevent.Policy, len(auditevent.Ops())), other: set.Resolve("")}
	for _, op := range auditevent.Ops() {
		t.byOp[op] = set.Resolve(op)
	}
	return t
}

// Get is the effective policy for an event of op.
func (t *Table) Get(op string) auditevent.Policy {
	if p, ok := t.byOp[op]; ok {
		return p
	}
	return t.other
}

// Equal reports whether t and o give every op the same policy.
func (t *Table) Equal(o *Table) bool {
	return t.other == o.other && maps.Equal(t.byOp, o.byOp)
}
