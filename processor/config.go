package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"go.opentelemetry.io/collector/component"

	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
)

// Config is the sandboxaudit processor configuration: the exporter's
// payload_policy and payload_policy_by_op keys with the same meaning and
// levels (SPEC section 4), without a sink level. Its Validate checks the op
// keys; the policy levels validate themselves.
type Config = payloadpolicy.Config

var _ component.Config = (*Config)(nil)
