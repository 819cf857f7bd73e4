// Package payloadpolicy holds the payload policy keys that the sandboxaudit
// exporter, processor and encoding extension share (docs/format.md, "The
// payload policy"), and their resolution to one effective policy per op.
package payloadpolicy // import "github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/confmap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/confcheck"
)

// Config is the component-wide policy level and the per-op levels, with the
// exporter's keys. The processor and the encoding extension use it as their
// whole configuration; the exporter adds a level per sink.
type Config struct {
	// PayloadPolicy is the component-wide policy level.
	PayloadPolicy auditevent.PolicyOverride `mapstructure:"payload_policy"`
	// PayloadPolicyByOp holds per-operation levels, keyed by op name.
	PayloadPolicyByOp map[string]auditevent.PolicyOverride `mapstructure:"payload_policy_by_op"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Unmarshal decodes conf, then refuses the numbers the decoder would have
// changed quietly (a fraction for an integer, a duration without a unit),
// naming the key.
func (cfg *Config) Unmarshal(conf *confmap.Conf) error { return confcheck.Unmarshal(conf, cfg) }

// Validate checks the op keys of payload_policy_by_op and the redact
// sections; the other policy keys validate themselves (confmap prefixes
// their errors with the key path).
func (cfg *Config) Validate() error {
	return errors.Join(CheckOps(cfg.PayloadPolicyByOp), CheckRedact(cfg.PayloadPolicy, cfg.PayloadPolicyByOp),
		CheckRedactUsed(cfg.PayloadPolicy, cfg.PayloadPolicyByOp, nil))
}

// CheckOps refuses an op key that format version 1 does not define, naming
// every unknown key and the known ones.
func CheckOps(byOp map[string]auditevent.PolicyOverride) error {
	var unknown []string
	for op := range byOp {
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
