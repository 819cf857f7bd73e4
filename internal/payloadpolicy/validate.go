package payloadpolicy

import (
	"errors"
	"sort"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// CheckRedact checks the redact sections of a component's levels: the
// expressions compile, the hash key file holds a key. Errors name the key
// path (payload_policy::redact::patterns[0]: ...).
func CheckRedact(def auditevent.PolicyOverride, byOp map[string]auditevent.PolicyOverride) error {
	errs := []error{CheckLevel("payload_policy", def)}
	ops := make([]string, 0, len(byOp))
	for op := range byOp {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		errs = append(errs, CheckLevel("payload_policy_by_op::"+op, byOp[op]))
	}
	return errors.Join(errs...)
}

// CheckLevel checks the redact section of the level at key.
func CheckLevel(key string, o auditevent.PolicyOverride) error {
	return redact.Validate(key+"::redact::", o.Redact)
}
