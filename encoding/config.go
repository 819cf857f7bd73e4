package sandboxauditencoding // import "github.com/sandboxaudit/sandboxaudit/encoding"

import (
	"fmt"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/component"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// Config is the extension's configuration: the payload policy applied to
// every line it marshals, with the sandboxaudit exporter's keys and types.
// There is no sink level: the extension is the sink.
type Config struct {
	// PayloadPolicy is the extension-wide policy level.
	PayloadPolicy auditevent.PolicyOverride `mapstructure:"payload_policy"`
	// PayloadPolicyByOp holds per-operation levels, keyed by op name.
	PayloadPolicyByOp map[string]auditevent.PolicyOverride `mapstructure:"payload_policy_by_op"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks the op keys of payload_policy_by_op; the policy levels
// validate themselves (confmap prefixes their errors with the key path).
func (cfg *Config) Validate() error {
	var unknown []string
	for op := range cfg.PayloadPolicyByOp {
		if !auditevent.IsOp(op) {
			unknown = append(unknown, op)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	for i, op := range unknown {
		unknown[i] = fmt.Sprintf("%q", op)
	}
	return fmt.Errorf("payload_policy_by_op: unknown op %s (known: %s)",
		strings.Join(unknown, ", "), strings.Join(auditevent.Ops(), ", "))
}

func createDefaultConfig() component.Config {
	return &Config{}
}

// policies is the effective policy per op, resolved once: the config never
// changes.
type policies struct {
	byOp  map[string]auditevent.Policy
	other auditevent.Policy // for an op outside format version 1
}

func newPolicies(cfg *Config) policies {
	set := auditevent.PolicySet{Default: cfg.PayloadPolicy, ByOp: cfg.PayloadPolicyByOp}
	p := policies{byOp: make(map[string]auditevent.Policy, len(auditevent.Ops())), other: set.Resolve("")}
	for _, op := range auditevent.Ops() {
		p.byOp[op] = set.Resolve(op)
	}
	return p
}

func (p policies) get(op string) auditevent.Policy {
	if pol, ok := p.byOp[op]; ok {
		return pol
	}
	return p.other
}
