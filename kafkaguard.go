package sandboxaudit

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/xreceiver"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"
)

// kafkaBuiltinEncodings are the kafka receiver's own encodings of a signal
// (v0.165.1); any other name must be an encoding extension.
func kafkaBuiltinEncodings(signal string) []string {
	switch signal {
	case "traces":
		return []string{"otlp_proto", "otlp_json", "jaeger_proto", "jaeger_json", "zipkin_proto", "zipkin_json", "zipkin_thrift"}
	case "logs":
		return []string{"otlp_proto", "otlp_json", "raw", "json", "azure_resource_logs", "text"}
	}
	return []string{"otlp_proto", "otlp_json"}
}

// kafkaReceiverFactory is the contrib kafka receiver with one check before
// it starts: its encoding is a built-in one or an extension of this
// collector. Started with a mistyped encoding (or the extension left out
// of service::extensions), the contrib receiver logs the error and the
// collector then never exits: its Shutdown waits for a consume loop that
// never ran. Refused before it starts, it shuts down at once.
func kafkaReceiverFactory() receiver.Factory {
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

// guarded wraps a created receiver in the encoding check.
func guarded[R component.Component](r R, err error, signal, encoding string) (R, error) {
	if err != nil {
		return r, err
	}
	return any(&kafkaEncodingGuard{Component: r, signal: signal, encoding: encoding}).(R), nil
}

// kafkaEncodingGuard is a kafka receiver checked before it starts.
type kafkaEncodingGuard struct {
	component.Component
	signal, encoding string
}

func (g *kafkaEncodingGuard) Start(ctx context.Context, host component.Host) error {
	if err := checkKafkaEncoding(g.signal, g.encoding, host); err != nil {
		return err
	}
	return g.Component.Start(ctx, host)
}

func checkKafkaEncoding(signal, encoding string, host component.Host) error {
	if slices.Contains(kafkaBuiltinEncodings(signal), encoding) || signal == "logs" && strings.HasPrefix(encoding, "text_") {
		return nil
	}
	var id component.ID
	if err := id.UnmarshalText([]byte(encoding)); err == nil {
		if ext, ok := host.GetExtensions()[id]; ok {
			if unmarshals(ext, signal) {
				return nil
			}
			return fmt.Errorf("kafka receiver: %s::encoding: the extension %q does not unmarshal %s", signal, encoding, signal)
		}
	}
	return fmt.Errorf("kafka receiver: %s::encoding: %q is neither one of its own encodings (%s) nor an extension in service::extensions",
		signal, encoding, strings.Join(kafkaBuiltinEncodings(signal), ", "))
}

// unmarshals reports whether ext can be the signal's encoding.
func unmarshals(ext component.Component, signal string) bool {
	var ok bool
	switch signal {
	case "traces":
		_, ok = ext.(ptrace.Unmarshaler)
	case "logs":
		_, ok = ext.(plog.Unmarshaler)
	case "metrics":
		_, ok = ext.(pmetric.Unmarshaler)
	case "profiles":
		_, ok = ext.(pprofile.Unmarshaler)
	}
	return ok
}
