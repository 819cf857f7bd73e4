package payloadpolicy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

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

// CheckRedactUsed refuses a level that writes redact patterns, keys,
// allow or hash_key_file where redaction is off for every op and sink the
// level reaches: they would never cut anything, and whoever wrote them
// expects them to. sinks maps each sink level's key to its level; a
// component without sink levels passes one empty level under "".
func CheckRedactUsed(def auditevent.PolicyOverride, byOp, sinks map[string]auditevent.PolicyOverride) error {
	if len(sinks) == 0 {
		sinks = map[string]auditevent.PolicyOverride{"": {}}
	}
	var usedDefault bool
	usedOp := map[string]bool{}
	usedSink := map[string]bool{}
	for key, sink := range sinks {
		set := auditevent.PolicySet{Default: def, ByOp: byOp, Sink: sink}
		for _, op := range append(auditevent.Ops(), "") {
			if RedactSettings(set, op).Enabled {
				usedDefault, usedOp[op], usedSink[key] = true, true, true
			}
		}
	}
	errs := []error{unusedLevel("payload_policy", def, usedDefault)}
	for _, op := range slices.Sorted(maps.Keys(byOp)) {
		errs = append(errs, unusedLevel("payload_policy_by_op::"+op, byOp[op], usedOp[op]))
	}
	for _, key := range slices.Sorted(maps.Keys(sinks)) {
		errs = append(errs, unusedLevel(key, sinks[key], usedSink[key]))
	}
	return errors.Join(errs...)
}

// unusedLevel names the redact keys with content that the level at key
// writes, when redaction is off wherever it applies (used false).
func unusedLevel(key string, o auditevent.PolicyOverride, used bool) error {
	if used {
		return nil
	}
	var written []string
	for _, k := range []struct {
		name string
		set  bool
	}{
		{"patterns", len(o.Redact.Patterns) > 0}, {"keys", len(o.Redact.Keys) > 0},
		{"allow", len(o.Redact.Allow) > 0}, {"hash_key_file", o.Redact.HashKeyFile != nil},
	} {
		if k.set {
			written = append(written, k.name)
		}
	}
	if len(written) == 0 {
		return nil
	}
	return fmt.Errorf("%s::redact: %s written, but redaction is off (redact.enabled: false) wherever this level applies, so they never apply",
		key, strings.Join(written, ", "))
}
