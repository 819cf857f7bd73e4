// Written by hand in the shape mdatagen v0.165.0 generates from
// ../../metadata.yaml (mdatagen cannot be installed here); keep the two in
// step.

package metadata

import (
	"errors"

	"go.opentelemetry.io/otel/metric"

	"go.opentelemetry.io/collector/component"
)

// Meter returns the processor's meter.
func Meter(settings component.TelemetrySettings) metric.Meter {
	return settings.MeterProvider.Meter(ScopeName)
}

// TelemetryBuilder holds the processor's instruments.
type TelemetryBuilder struct {
	meter                                metric.Meter
	SandboxauditProcessorSecretsRedacted metric.Int64Counter
}

// NewTelemetryBuilder creates the instruments declared in metadata.yaml.
func NewTelemetryBuilder(settings component.TelemetrySettings) (*TelemetryBuilder, error) {
	builder := TelemetryBuilder{meter: Meter(settings)}
	var err, errs error
	builder.SandboxauditProcessorSecretsRedacted, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_processor_secrets_redacted",
		metric.WithDescription("Number of values cut by payload_policy redact, by kind (in span and exception event attributes, status messages, and audit event log record bodies and attributes); the values are never recorded. [Alpha]"),
		metric.WithUnit("{cut}"),
	)
	errs = errors.Join(errs, err)
	return &builder, errs
}
