// Written by hand in the shape mdatagen v0.165.0 generates from
// metadata.yaml (mdatagen cannot be installed here). TestMetadataMatchesCode
// keeps the two in step and says what to add when they differ. The file
// name is mdatagen's, so that a real mdatagen run replaces it in place.

package metadata

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/trace"

	"go.opentelemetry.io/collector/component"
)

func Meter(settings component.TelemetrySettings) metric.Meter {
	return settings.MeterProvider.Meter("github.com/sandboxaudit/sandboxaudit/receiver")
}

func Tracer(settings component.TelemetrySettings) trace.Tracer {
	return settings.TracerProvider.Tracer("github.com/sandboxaudit/sandboxaudit/receiver")
}

// TelemetryBuilder provides an interface for components to report telemetry
// as defined in metadata and user config.
type TelemetryBuilder struct {
	meter                                  metric.Meter
	mu                                     sync.Mutex
	registrations                          []metric.Registration
	SandboxauditReceiverConnectionsEvicted metric.Int64Counter
	SandboxauditReceiverDuplicatesDropped  metric.Int64Counter
	SandboxauditReceiverEventsAccepted     metric.Int64Counter
	SandboxauditReceiverEventsRefused      metric.Int64Counter
	SandboxauditReceiverPairsPending       metric.Int64ObservableGauge
	SandboxauditReceiverPairsTimedOut      metric.Int64Counter
	SandboxauditReceiverRequests           metric.Int64Counter
	SandboxauditReceiverSpansDropped       metric.Int64Counter
	SandboxauditReceiverSpansSkipped       metric.Int64Counter
}

// TelemetryBuilderOption applies changes to default builder.
type TelemetryBuilderOption interface {
	apply(*TelemetryBuilder)
}

type telemetryBuilderOptionFunc func(mb *TelemetryBuilder)

func (tbof telemetryBuilderOptionFunc) apply(mb *TelemetryBuilder) {
	tbof(mb)
}

// RegisterSandboxauditReceiverPairsPendingCallback sets callback for observable SandboxauditReceiverPairsPending metric.
func (builder *TelemetryBuilder) RegisterSandboxauditReceiverPairsPendingCallback(cb metric.Int64Callback) error {
	reg, err := builder.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return cb(ctx, &observerInt64{inst: builder.SandboxauditReceiverPairsPending, obs: o})
	}, builder.SandboxauditReceiverPairsPending)
	if err != nil {
		return err
	}
	builder.mu.Lock()
	defer builder.mu.Unlock()
	builder.registrations = append(builder.registrations, reg)
	return nil
}

type observerInt64 struct {
	embedded.Int64Observer
	inst metric.Int64Observable
	obs  metric.Observer
}

func (oi *observerInt64) Observe(value int64, opts ...metric.ObserveOption) {
	oi.obs.ObserveInt64(oi.inst, value, opts...)
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
	builder.SandboxauditReceiverConnectionsEvicted, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_receiver_connections_evicted",
		metric.WithDescription("Number of connections closed at max_connections to make room for one of another client address, by the state of the closed one [Alpha]"),
		metric.WithUnit("{connection}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditReceiverDuplicatesDropped, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_receiver_duplicates_dropped",
		metric.WithDescription("Number of events dropped because their event_id was already delivered [Alpha]"),
		metric.WithUnit("{event}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditReceiverEventsAccepted, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_receiver_events_accepted",
		metric.WithDescription("Number of audit events accepted by the next consumer (the logs pipeline, or else the traces pipeline, whose pairing may hold a start until its finish) [Alpha]"),
		metric.WithUnit("{event}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditReceiverEventsRefused, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_receiver_events_refused",
		metric.WithDescription("Number of audit events refused, by reason (invalid_span counts the malformed spans, which give no events) [Alpha]"),
		metric.WithUnit("{event}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditReceiverPairsPending, err = builder.meter.Int64ObservableGauge(
		"otelcol_sandboxaudit_receiver_pairs_pending",
		metric.WithDescription("Number of start events waiting for their finish event [Alpha]"),
		metric.WithUnit("{pair}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditReceiverPairsTimedOut, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_receiver_pairs_timed_out",
		metric.WithDescription("Number of start events emitted as incomplete spans because no finish arrived in time, the pending table was full, another start with the same session and span_id replaced them, their finish could not share their span, or at shutdown [Alpha]"),
		metric.WithUnit("{pair}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditReceiverRequests, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_receiver_requests",
		metric.WithDescription("Number of HTTP requests, by endpoint, outcome and status code [Alpha]"),
		metric.WithUnit("{request}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditReceiverSpansDropped, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_receiver_spans_dropped",
		metric.WithDescription("Number of spans built from sandbox events that the traces consumer refused [Alpha]"),
		metric.WithUnit("{span}"),
	)
	errs = errors.Join(errs, err)
	builder.SandboxauditReceiverSpansSkipped, err = builder.meter.Int64Counter(
		"otelcol_sandboxaudit_receiver_spans_skipped",
		metric.WithDescription("Number of received spans that are not sandbox spans and map to no events [Alpha]"),
		metric.WithUnit("{span}"),
	)
	errs = errors.Join(errs, err)
	return &builder, errs
}
