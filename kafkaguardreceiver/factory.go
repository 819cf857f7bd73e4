// Package kafkaguardreceiver is the contrib kafka receiver with one check
// before it starts: its encoding is a built-in one or an extension of this
// collector. When the contrib receiver's start fails once it has begun (a
// mistyped encoding, the extension left out of service::extensions, a TLS
// file that is not there), the collector logs the error and then never
// exits: the receiver's Shutdown waits for a consume loop that never ran.
// Refused before it starts, or shut down as soon as its start fails, it
// lets the collector exit at once. It also refuses, when created, settings
// that consume nothing or skip messages without a word, and never logs a
// message's value.
//
// It registers as `kafka`; a collector build lists it instead of the
// contrib receiver.
package kafkaguardreceiver

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/xreceiver"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"
)

// NewFactory returns the contrib kafka receiver's factory, under the same
// type and config, whose receivers check their configuration when created
// and their encoding before they start.
func NewFactory() receiver.Factory {
	inner := kafkareceiver.NewFactory().(xreceiver.Factory)
	return xreceiver.NewFactory(inner.Type(), inner.CreateDefaultConfig,
		xreceiver.WithTraces(guard(inner.CreateTraces, "traces",
			func(c *kafkareceiver.Config) kafkareceiver.TopicEncodingConfig { return c.Traces }), inner.TracesStability()),
		xreceiver.WithLogs(guard(inner.CreateLogs, "logs",
			func(c *kafkareceiver.Config) kafkareceiver.TopicEncodingConfig { return c.Logs }), inner.LogsStability()),
		xreceiver.WithMetrics(guard(inner.CreateMetrics, "metrics",
			func(c *kafkareceiver.Config) kafkareceiver.TopicEncodingConfig { return c.Metrics }), inner.MetricsStability()),
		xreceiver.WithProfiles(guard(inner.CreateProfiles, "profiles",
			func(c *kafkareceiver.Config) kafkareceiver.TopicEncodingConfig { return c.Profiles }), inner.ProfilesStability()),
	)
}

// guard wraps the contrib factory's create function of one signal so that
// it refuses the signal without topics, an error_backoff that never waits
// and an audit intake that skips or reorders messages, and what it creates
// logs no message value and checks the signal's encoding at Start.
func guard[N any, R component.Component](
	create func(context.Context, receiver.Settings, component.Config, N) (R, error),
	signal string, section func(*kafkareceiver.Config) kafkareceiver.TopicEncodingConfig,
) func(context.Context, receiver.Settings, component.Config, N) (R, error) {
	return func(ctx context.Context, set receiver.Settings, cfg component.Config, next N) (R, error) {
		c := cfg.(*kafkareceiver.Config)
		if err := errors.Join(checkTopics(signal, section(c).Topics), checkBackOff(c.ErrorBackOff),
			checkAuditIntake(signal, section(c).Encoding, c), checkSharedTopics(signal, c)); err != nil {
			var none R
			return none, err
		}
		set.Logger = withoutMessageValues(set.Logger)
		r, err := create(ctx, set, cfg, next)
		if err != nil {
			return r, err
		}
		return any(&encodingGuard{Component: r, signal: signal, encoding: section(c).Encoding}).(R), nil
	}
}
