package sandboxauditencoding // import "github.com/sandboxaudit/sandboxaudit/encoding"

import (
	"go.opentelemetry.io/collector/component"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
)

// Config is the extension's configuration: the payload policy applied to
// every line it marshals, with the sandboxaudit exporter's keys and types
// (payload_policy, payload_policy_by_op). There is no sink level: the
// extension is the sink. Its Validate checks the op keys; the policy levels
// validate themselves.
type Config = payloadpolicy.Config

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{}
}

// newPolicies resolves the effective policy per op once: the config never
// changes.
func newPolicies(cfg *Config) (*payloadpolicy.Table, error) {
	return payloadpolicy.NewTable(auditevent.PolicySet{Default: cfg.PayloadPolicy, ByOp: cfg.PayloadPolicyByOp})
}
