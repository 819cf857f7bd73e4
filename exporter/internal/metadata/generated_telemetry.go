// Written by hand in the shape mdatagen v0.165.0 generates from
// metadata.yaml (mdatagen cannot be installed here). TestMetadataMatchesCode
// keeps the two in step and says what to add when they differ. The file
// name is mdatagen's, so that a real mdatagen run replaces it in place.

package metadata

import (
	"errors"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"go.opentelemetry.io/collector/component"
)

func Meter(settings component.TelemetrySettings) metric.Meter {
	return settings.MeterProvider.Meter("github.com/sandboxaudit/sandboxaudit/exporter")
}

func Tracer(settings component.TelemetrySettings) trace.Tracer {
	return settings.TracerProvider.Tracer("github.com/sandboxaudit/sandboxaudit/exporter")
}

// TelemetryBuilder provides an interface for components to report telemetry
// as defined in metadata and user config.
type TelemetryBuilder struct {
	meter                                     metric.Meter
	mu                                        sync.Mutex
	registrations                             []metric.Registration
	SandboxauditExporterCheckpointsWritten    metric.Int64Counter
	SandboxauditExporterEventsDropped         metric.Int64Counter
	SandboxauditExporterEventsReplayed        metric.Int64Counter
	SandboxauditExporterEventsSpooled         metric.Int64Counter
	SandboxauditExporterEventsWritten         metric.Int64Counter
	SandboxauditExporterItemsSkipped          metric.Int64Counter
	SandboxauditExporterLinesSealed           metric.Int64Counter
	SandboxauditExporterSealLagLines          metric.Int64Gauge
	SandboxauditExporterSecretsRedacted       metric.Int64Counter
	SandboxauditExporterSegmentErrors         metric.Int64Counter
	SandboxauditExporterSegmentsRemoved       metric.Int64Counter
	SandboxauditExporterSegmentsRotated       metric.Int64Counter
	SandboxauditExporterSeqSessionsEvicted    metric.Int64Counter
	SandboxauditExporterSpoolAdoptionsNotKept metric.Int64Counter
	SandboxauditExporterSpoolLinesQuarantined metric.Int64Counter
	SandboxauditExporterSpoolSize             metric.Int64Gauge
	SandboxauditExporterWitnessCosignatures   metric.Int64Counter
	SandboxauditExporterWitnessFailures       metric.Int64Counter
}

// TelemetryBuilderOption applies changes to default builder.
type TelemetryBuilderOption interface {
	apply(*TelemetryBuilder)
}

type telemetryBuilderOptionFunc func(mb *TelemetryBuilder)

func (tbof telemetryBuilderOptionFunc) apply(mb *TelemetryBuilder) {
	tbof(mb)
}

// Shutdown unregister all registered callbacks for async instruments.
func (builder *TelemetryBuilder) Shutdown() {
	builder.mu.Lock()
	defer builder.mu.Unlock()
	for _, reg := range builder.registrations {
		// mdatagen drops this error too: at shutdown there is no one to
		// report it to.
		_ = reg.Unregister()
	}
}

// NewTelemetryBuilder provides a struct with methods to update all internal telemetry
// for a component
func NewTelemetryBuilder(settings component.TelemetrySettings, options ...TelemetryBuilderOption) (*TelemetryBuilder, error) {
	builder := TelemetryBuilder{}
	for _, op := range options {
		op.apply(&builder)
	}
	builder.meter = Meter(settings)
	var err, errs error
	builder.SandboxauditExporterCheckpointsWritten, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_checkpoints_written",
		metric.WithDescription("Number of signed checkpoints the file sink's integrity sealer appended. [Alpha]"),
		metric.WithUnit("{checkpoint}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterEventsDropped, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_events_dropped",
		metric.WithDescription("Number of audit events a sink could not deliver nor keep, by reason. [Alpha]"),
		metric.WithUnit("{event}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterEventsReplayed, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_events_replayed",
		metric.WithDescription("Number of spooled audit events delivered by the replayer. [Alpha]"),
		metric.WithUnit("{event}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterEventsSpooled, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_events_spooled",
		metric.WithDescription("Number of audit events written to the HTTP sink's spool because delivery failed. [Alpha]"),
		metric.WithUnit("{event}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterEventsWritten, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_events_written",
		metric.WithDescription("Number of audit events a sink accepted (file written, or HTTP endpoint answered 2xx, including replays). [Alpha]"),
		metric.WithUnit("{event}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterItemsSkipped, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_items_skipped",
		metric.WithDescription("Number of spans and log records that did not become audit events, by reason. [Alpha]"),
		metric.WithUnit("{item}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterLinesSealed, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_lines_sealed",
		metric.WithDescription("Number of audit file lines added to the Merkle tree, whoever wrote them. [Alpha]"),
		metric.WithUnit("{line}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterSealLagLines, err = builder.meter.Int64Gauge(
		"otelcol_sandboxaudit_exporter_seal_lag_lines",
		metric.WithDescription("Lines the file sink wrote that no checkpoint covers yet. [Alpha]"),
		metric.WithUnit("{line}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterSecretsRedacted, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_secrets_redacted",
		metric.WithDescription("Number of values cut by payload_policy redact, by kind (each sink's encoding counts its own cuts); the values are never recorded. [Alpha]"),
		metric.WithUnit("{cut}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterSegmentErrors, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_segment_errors",
		metric.WithDescription("Number of rotation, compression and retention steps that failed (no segment is lost; the step is tried again); a retention stopped at a segment that cannot be removed counts once per round it stays stopped. [Alpha]"),
		metric.WithUnit("{error}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterSegmentsRemoved, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_segments_removed",
		metric.WithDescription("Number of closed segments retention removed, by the rule that removed them. [Alpha]"),
		metric.WithUnit("{segment}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterSegmentsRotated, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_segments_rotated",
		metric.WithDescription("Number of times the file sink closed an audit file as a segment and began a new one. [Alpha]"),
		metric.WithUnit("{segment}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterSeqSessionsEvicted, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_seq_sessions_evicted",
		metric.WithDescription("Number of sessions whose seq counter was dropped to keep within the span mapper's bound; seqs then assigned to that session's spans without seq attributes start again at 1 and may repeat. [Alpha]"),
		metric.WithUnit("{session}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterSpoolAdoptionsNotKept, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_spool_adoptions_not_kept",
		metric.WithDescription("Number of files the HTTP sink's spool adopted at start (lines, no .offset sidecar) without keeping the file as found under a second name (the .adopted- copies at the spool's max size, or the link failed); replay trims their lines once sent. [Alpha]"),
		metric.WithUnit("{file}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterSpoolLinesQuarantined, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_spool_lines_quarantined",
		metric.WithDescription("Number of lines of the HTTP sink's spool that were not valid audit events (torn, overwritten, bytes inserted) and were moved to its quarantine file instead of being sent. [Alpha]"),
		metric.WithUnit("{line}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterSpoolSize, err = builder.meter.Int64Gauge(
		"otelcol_sandboxaudit_exporter_spool_size",
		metric.WithDescription("Bytes held in the HTTP sink's spool, waiting for replay. [Alpha]"),
		metric.WithUnit("By"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterWitnessCosignatures, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_witness_cosignatures",
		metric.WithDescription("Number of cosignatures witnesses returned for the file sink's checkpoints, by witness. [Alpha]"),
		metric.WithUnit("{cosignature}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditExporterWitnessFailures, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_exporter_witness_failures",
		metric.WithDescription("Number of checkpoint submissions a witness refused or did not answer, by witness and reason; a failure is logged at ERROR when it differs from the last one logged for that witness and file. [Alpha]"),
		metric.WithUnit("{submission}"),
	)
	errs = errors.Join(errs, err)
	return &builder, errs
}
