// Written by hand in the shape mdatagen v0.165.0 generates from
// ../../metadata.yaml (mdatagen cannot be installed here); keep the two in
// step.

package metadata

import (
	"errors"

	"go.opentelemetry.io/otel/metric"

	"go.opentelemetry.io/collector/component"
)

// Meter returns the extension's meter.
func Meter(settings component.TelemetrySettings) metric.Meter {
	return settings.MeterProvider.Meter(ScopeName)
}

// TelemetryBuilder holds the extension's instruments.
type TelemetryBuilder struct {
	meter                                  metric.Meter
	SandboxauditEncodingEventsMarshaled    metric.Int64Counter
	SandboxauditEncodingEventsUnmarshaled  metric.Int64Counter
	SandboxauditEncodingItemsSkipped       metric.Int64Counter
	SandboxauditEncodingMessagesRejected   metric.Int64Counter
	SandboxauditEncodingSecretsRedacted    metric.Int64Counter
	SandboxauditEncodingSeqSessionsEvicted metric.Int64Counter
}

// NewTelemetryBuilder creates the instruments declared in metadata.yaml.
func NewTelemetryBuilder(settings component.TelemetrySettings) (*TelemetryBuilder, error) {
	builder := TelemetryBuilder{meter: Meter(settings)}
	var err, errs error
	builder.SandboxauditEncodingEventsMarshaled, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_encoding_events_marshaled",
		metric.WithDescription("Number of audit events written as canonical lines by MarshalTraces and MarshalLogs. [Alpha]"),
		metric.WithUnit("{event}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditEncodingEventsUnmarshaled, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_encoding_events_unmarshaled",
		metric.WithDescription("Number of audit events read from canonical lines by UnmarshalLogs and UnmarshalTraces. [Alpha]"),
		metric.WithUnit("{event}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditEncodingItemsSkipped, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_encoding_items_skipped",
		metric.WithDescription("Number of spans and log records that did not become audit events when marshaling, by reason. [Alpha]"),
		metric.WithUnit("{item}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditEncodingMessagesRejected, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_encoding_messages_rejected",
		metric.WithDescription("Number of messages refused by UnmarshalLogs or UnmarshalTraces because a line is not a valid audit event. [Alpha]"),
		metric.WithUnit("{message}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditEncodingSecretsRedacted, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_encoding_secrets_redacted",
		metric.WithDescription("Number of values cut by payload_policy redact, by kind (per marshaled line); the values are never recorded. [Alpha]"),
		metric.WithUnit("{cut}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditEncodingSeqSessionsEvicted, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_encoding_seq_sessions_evicted",
		metric.WithDescription("Number of sessions whose seq counter was dropped to keep within the span mapper's bound; seqs then assigned to that session's spans without seq attributes start again at 1 and may repeat. [Alpha]"),
		metric.WithUnit("{session}"),
	)
	errs = errors.Join(errs, err)
	return &builder, errs
}
