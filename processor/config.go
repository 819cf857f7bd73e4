package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/confcheck"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
)

// Config is the sandboxaudit processor configuration: the exporter's
// payload_policy and payload_policy_by_op keys with the same meaning and
// levels, without a sink level, and genai_attributes.
type Config struct {
	// PayloadPolicy is the component-wide policy level.
	PayloadPolicy auditevent.PolicyOverride `mapstructure:"payload_policy"`
	// PayloadPolicyByOp holds per-operation levels, keyed by op name.
	PayloadPolicyByOp map[string]auditevent.PolicyOverride `mapstructure:"payload_policy_by_op"`

	// GenAIAttributes adds the tool-call attributes that agent tracing UIs
	// key on (gen_ai.operation.name, gen_ai.tool.name, gen_ai.tool.type,
	// openinference.span.kind) to sandbox spans that lack them, such as
	// the Python SDK's.
	GenAIAttributes bool `mapstructure:"genai_attributes"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Unmarshal decodes conf, refusing the numbers the decoder would change.
func (cfg *Config) Unmarshal(conf *confmap.Conf) error { return confcheck.Unmarshal(conf, cfg) }

// Validate checks the op keys and the redact sections; the other policy
// keys validate themselves.
func (cfg *Config) Validate() error {
	return errors.Join(payloadpolicy.CheckOps(cfg.PayloadPolicyByOp), payloadpolicy.CheckRedact(cfg.PayloadPolicy, cfg.PayloadPolicyByOp),
		payloadpolicy.CheckRedactUsed(cfg.PayloadPolicy, cfg.PayloadPolicyByOp, nil))
}
