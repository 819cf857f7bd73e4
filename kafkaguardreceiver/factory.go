// Package kafkaguardreceiver is the contrib kafka receiver with one check
// before it starts: its encoding is a built-in one or an extension of this
// collector. Started with a mistyped encoding (or the extension left out of
// service::extensions), the contrib receiver logs the error and the
// collector then never exits: its Shutdown waits for a consume loop that
// never ran. Refused before it starts, it shuts down at once.
//
// It registers as `kafka`; a collector build lists it instead of the
// contrib receiver.
package kafkaguardreceiver

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/xreceiver"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"
)

// NewFactory returns the contrib kafka receiver's factory, under the same
// type and config, whose receivers check their encoding before they start.
func NewFactory() receiver.Factory {
	inner := kafkareceiver.NewFactory().(xreceiver.Factory)
	encodings := func(cfg component.Config) *kafkareceiver.Config { return cfg.(*kafkareceiver.Config) }
	return xreceiver.NewFactory(inner.Type(), inner.CreateDefaultConfig,
		xreceiver.WithTraces(func(ctx context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
			r, err := inner.CreateTraces(ctx, set, cfg, next)
			return guarded(r, err, "traces", encodings(cfg).Traces.Encoding)
		}, inner.TracesStability()),
		xreceiver.WithLogs(func(ctx context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
			r, err := inner.CreateLogs(ctx, set, cfg, next)
			return guarded(r, err, "logs", encodings(cfg).Logs.Encoding)
		}, inner.LogsStability()),
		xreceiver.WithMetrics(func(ctx context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
			r, err := inner.CreateMetrics(ctx, set, cfg, next)
			return guarded(r, err, "metrics", encodings(cfg).Metrics.Encoding)
		}, inner.MetricsStability()),
		xreceiver.WithProfiles(func(ctx context.Context, set receiver.Settings, cfg component.Config, next xconsumer.Profiles) (xreceiver.Profiles, error) {
			r, err := inner.CreateProfiles(ctx, set, cfg, next)
			return guarded(r, err, "profiles", encodings(cfg).Profiles.Encoding)
		}, inner.ProfilesStability()),
	)
}
