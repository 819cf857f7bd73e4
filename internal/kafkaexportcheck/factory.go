// Package kafkaexportcheck is the contrib kafka exporter with its
// encodings checked before it starts. An encoding that names an extension
// this collector builds, configured but left out of service::extensions,
// fails the contrib exporter's start with `unrecognized logs encoding`,
// which names neither the key nor the cause; checked first, the start
// error names both.
package kafkaexportcheck // import "github.com/sandboxaudit/sandboxaudit/internal/kafkaexportcheck"

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/xexporter"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
)

// NewFactory returns the contrib kafka exporter's factory, under the same
// type and config, whose exporters check at start that an encoding naming
// one of the extension types given is in service::extensions.
func NewFactory(extensions ...component.Type) exporter.Factory {
	inner := kafkaexporter.NewFactory().(xexporter.Factory)
	known := map[component.Type]bool{}
	for _, t := range extensions {
		known[t] = true
	}
	check := func(set exporter.Settings, cfg component.Config, signal string) func(component.Host) error {
		return func(host component.Host) error {
			return checkEncoding(set.ID, signal, encodingOf(cfg.(*kafkaexporter.Config), signal), known, host)
		}
	}
	return xexporter.NewFactory(inner.Type(), inner.CreateDefaultConfig,
		xexporter.WithTraces(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
			e, err := inner.CreateTraces(ctx, set, cfg)
			if err != nil {
				return nil, err
			}
			return traces{e, check(set, cfg, "traces")}, nil
		}, inner.TracesStability()),
		xexporter.WithLogs(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
			e, err := inner.CreateLogs(ctx, set, cfg)
			if err != nil {
				return nil, err
			}
			return logs{e, check(set, cfg, "logs")}, nil
		}, inner.LogsStability()),
		xexporter.WithMetrics(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
			e, err := inner.CreateMetrics(ctx, set, cfg)
			if err != nil {
				return nil, err
			}
			return metrics{e, check(set, cfg, "metrics")}, nil
		}, inner.MetricsStability()),
		xexporter.WithProfiles(func(ctx context.Context, set exporter.Settings, cfg component.Config) (xexporter.Profiles, error) {
			e, err := inner.CreateProfiles(ctx, set, cfg)
			if err != nil {
				return nil, err
			}
			return profiles{e, check(set, cfg, "profiles")}, nil
		}, inner.ProfilesStability()),
	)
}

func encodingOf(cfg *kafkaexporter.Config, signal string) string {
	switch signal {
	case "traces":
		return cfg.Traces.Encoding
	case "logs":
		return cfg.Logs.Encoding
	case "metrics":
		return cfg.Metrics.Encoding
	}
	return cfg.Profiles.Encoding
}

// checkEncoding refuses an encoding that names an extension of a known
// type that the service does not run.
func checkEncoding(id component.ID, signal, encoding string, known map[component.Type]bool, host component.Host) error {
	var ext component.ID
	if ext.UnmarshalText([]byte(encoding)) != nil || !known[ext.Type()] {
		return nil // a built-in encoding, or one the exporter itself judges
	}
	if _, ok := host.GetExtensions()[ext]; ok {
		return nil
	}
	return fmt.Errorf("exporters::%s::%s::encoding: extension %q is not in service::extensions", id, signal, encoding)
}
