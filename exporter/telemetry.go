package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sandboxaudit/sandboxaudit/exporter/internal/metadata"
	"github.com/sandboxaudit/sandboxaudit/internal/httpsink"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// Metric attribute values.
const (
	sinkFile = "file"
	sinkHTTP = "http"

	// items_skipped reasons.
	reasonNotSandboxSpan = "not_sandbox_span"
	reasonInvalidSpan    = "invalid_span"
	reasonNotAuditEvent  = "not_audit_event"
	reasonInvalidEvent   = "invalid_event"
	// reasonLineTooLong: an event's line would pass max_line_bytes.
	reasonLineTooLong = "line_too_long"

	// reasonFileError is the events_dropped reason for a batch the file
	// sink could not write (exporterhelper retry is off, so it is gone).
	// The HTTP sink's reasons are httpsink.Reason*.
	reasonFileError = "file_error"
	// reasonFileSymlink: the file, or a directory below the path's base
	// directory, is a symbolic link; the batch is refused, not written
	// through it.
	reasonFileSymlink = "file_symlink"
)

// telemetry records the exporter's own metrics. Attribute sets are built
// once so the hot path does not allocate for them.
type telemetry struct {
	tb *metadata.TelemetryBuilder

	writtenFile metric.AddOption
	writtenHTTP metric.AddOption

	skippedNotSandboxSpan metric.AddOption
	skippedInvalidSpan    metric.AddOption
	skippedNotAuditEvent  metric.AddOption
	skippedInvalidEvent   metric.AddOption
	skippedLineTooLong    metric.AddOption

	// gauge names this exporter on its gauges' points: the instruments are
	// shared by every sandboxaudit exporter of the collector, and a gauge
	// point without it would hold whichever exporter recorded last.
	gauge metric.RecordOption

	// seqEvictions is the span mapper's eviction count already added to
	// seq_sessions_evicted.
	seqEvictions cumulativeCount
}

func newTelemetry(tb *metadata.TelemetryBuilder, id component.ID) *telemetry {
	sink := func(v string) metric.AddOption {
		return metric.WithAttributeSet(attribute.NewSet(attribute.String("sink", v)))
	}
	reason := func(v string) metric.AddOption {
		return metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", v)))
	}
	return &telemetry{
		tb:                    tb,
		writtenFile:           sink(sinkFile),
		writtenHTTP:           sink(sinkHTTP),
		skippedNotSandboxSpan: reason(reasonNotSandboxSpan),
		skippedInvalidSpan:    reason(reasonInvalidSpan),
		skippedNotAuditEvent:  reason(reasonNotAuditEvent),
		skippedInvalidEvent:   reason(reasonInvalidEvent),
		skippedLineTooLong:    reason(reasonLineTooLong),
		gauge:                 metric.WithAttributeSet(attribute.NewSet(attribute.String("exporter", id.String()))),
	}
}

func (t *telemetry) written(ctx context.Context, sink string, n int) {
	if n <= 0 {
		return
	}
	opt := t.writtenFile
	if sink == sinkHTTP {
		opt = t.writtenHTTP
	}
	t.tb.SandboxauditExporterEventsWritten.Add(ctx, int64(n), opt)
}

func (t *telemetry) skipped(ctx context.Context, reason string, n int) {
	if n <= 0 {
		return
	}
	var opt metric.AddOption
	switch reason {
	case reasonNotSandboxSpan:
		opt = t.skippedNotSandboxSpan
	case reasonInvalidSpan:
		opt = t.skippedInvalidSpan
	case reasonNotAuditEvent:
		opt = t.skippedNotAuditEvent
	case reasonLineTooLong:
		opt = t.skippedLineTooLong
	default:
		opt = t.skippedInvalidEvent
	}
	t.tb.SandboxauditExporterItemsSkipped.Add(ctx, int64(n), opt)
}

func (t *telemetry) dropped(ctx context.Context, reason string, n int) {
	if n <= 0 {
		return
	}
	t.tb.SandboxauditExporterEventsDropped.Add(ctx, int64(n),
		metric.WithAttributes(attribute.String("reason", reason)))
}

// seqSessionsEvicted adds to seq_sessions_evicted what the span mapper's
// cumulative eviction count (spanmap.Mapper.SeqEvictions) grew by since it
// was last reported, and returns that increase.
func (t *telemetry) seqSessionsEvicted(ctx context.Context, total int64) int64 {
	n := t.seqEvictions.advance(total)
	if n > 0 {
		t.tb.SandboxauditExporterSeqSessionsEvicted.Add(ctx, n)
	}
	return n
}

// cumulativeCount turns a cumulative count read elsewhere into increases.
// Concurrent pushes may read the count and call advance in either order;
// the last value only ever moves forward, so each unit is reported once.
type cumulativeCount struct{ last atomic.Int64 }

// advance records total and returns how much it exceeds the largest total
// recorded before (0 when it does not).
func (c *cumulativeCount) advance(total int64) int64 {
	for {
		last := c.last.Load()
		if total <= last {
			return 0
		}
		if c.last.CompareAndSwap(last, total) {
			return total - last
		}
	}
}

// httpObserver feeds the HTTP sink's delivery counts into the metrics.
type httpObserver struct{ t *telemetry }

var _ httpsink.Observer = httpObserver{}

func (o httpObserver) Sent(ctx context.Context, n int) { o.t.written(ctx, sinkHTTP, n) }

func (o httpObserver) Spooled(ctx context.Context, n int) {
	o.t.tb.SandboxauditExporterEventsSpooled.Add(ctx, int64(n))
}

// Replayed lines reached the endpoint, so they count as written too:
// events_written{sink=http} is everything the endpoint acknowledged.
func (o httpObserver) Replayed(ctx context.Context, n int) {
	o.t.tb.SandboxauditExporterEventsReplayed.Add(ctx, int64(n))
	o.t.written(ctx, sinkHTTP, n)
}

func (o httpObserver) Dropped(ctx context.Context, n int, reason string) {
	o.t.dropped(ctx, reason, n)
}

// Refused lines are handed back as an error; with exporterhelper's retry
// off the exporter never resends them, so they are dropped as far as it can
// tell (a client that gets the receiver's 503 may send them again).
func (o httpObserver) Refused(ctx context.Context, n int, reason string) {
	o.t.dropped(ctx, reason, n)
}

func (o httpObserver) Quarantined(ctx context.Context, n int) {
	o.t.tb.SandboxauditExporterSpoolLinesQuarantined.Add(ctx, int64(n))
}

func (o httpObserver) AdoptedNotKept(ctx context.Context, n int) {
	o.t.tb.SandboxauditExporterSpoolAdoptionsNotKept.Add(ctx, int64(n))
}

func (o httpObserver) SpoolSize(bytes int64) {
	// The callback has no context; the gauge needs none for its value.
	o.t.tb.SandboxauditExporterSpoolSize.Record(context.Background(), bytes, o.t.gauge)
}

// witnessCosigned counts a cosignature from the witness named w.
func (t *telemetry) witnessCosigned(ctx context.Context, w string) {
	t.tb.SandboxauditExporterWitnessCosignatures.Add(ctx, 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("witness", w))))
}

// witnessFailed counts a submission the witness named w did not cosign.
func (t *telemetry) witnessFailed(ctx context.Context, w, reason string) {
	t.tb.SandboxauditExporterWitnessFailures.Add(ctx, 1,
		metric.WithAttributeSet(attribute.NewSet(attribute.String("witness", w), attribute.String("reason", reason))))
}

// redacted adds the cuts of one encoding, by kind.
func (t *telemetry) redacted(ctx context.Context, c *redact.Counts) {
	c.Each(func(kind string, n int) {
		t.tb.SandboxauditExporterSecretsRedacted.Add(ctx, int64(n),
			metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", kind))))
	})
}
