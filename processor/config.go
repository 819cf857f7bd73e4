package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"fmt"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/component"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// Config is the sandboxaudit processor configuration: the exporter's
// policy keys with the same meaning and levels (SPEC section 4), without a
// sink level.
type Config struct {
	// PayloadPolicy is the processor-wide policy level.
	PayloadPolicy auditevent.PolicyOverride `mapstructure:"payload_policy"`
	// PayloadPolicyByOp holds per-operation levels, keyed by op name.
	PayloadPolicyByOp map[string]auditevent.PolicyOverride `mapstructure:"payload_policy_by_op"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks the op keys of payload_policy_by_op; the policy levels
// validate themselves (negative max_*_chars).
func (cfg *Config) Validate() error {
	var unknown []string
	for op := range cfg.PayloadPolicyByOp {
		if !auditevent.IsOp(op) {
			unknown = append(unknown, fmt.Sprintf("%q", op))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("payload_policy_by_op: unknown op %s (known: %s)",
		strings.Join(unknown, ", "), strings.Join(auditevent.Ops(), ", "))
}

// policies resolves the effective policy of every op once.
func (cfg *Config) policies() map[string]auditevent.Policy {
	set := auditevent.PolicySet{Default: cfg.PayloadPolicy, ByOp: cfg.PayloadPolicyByOp}
	out := make(map[string]auditevent.Policy, len(auditevent.Ops())+1)
	for _, op := range auditevent.Ops() {
		out[op] = set.Resolve(op)
	}
	out[""] = set.Resolve("") // an op outside format version 1
	return out
}
