// Package kafkaexportcheck is the contrib kafka exporter with its
// encodings checked before it starts. An encoding that names an extension
// this collector builds, configured but left out of service::extensions,
// fails the contrib exporter's start with `unrecognized logs encoding`,
// which names neither the key nor the cause; checked first, the start
// error names both.
package kafkaexportcheck // import "github.com/sandboxaudit/sandboxaudit/internal/kafkaexportcheck"

import (
	"context"
	"errors"
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
	return xexporter.NewFactory(inner.Type(), inner.CreateDefaultConfig,
		xexporter.WithTraces(checked(inner.CreateTraces, "traces", known,
			func(c *kafkaexporter.Config) string { return c.Traces.Encoding },
			func(e exporter.Traces, check startCheck) exporter.Traces { return traces{e, check} }),
			inner.TracesStability()),
		xexporter.WithLogs(checked(inner.CreateLogs, "logs", known,
			func(c *kafkaexporter.Config) string { return c.Logs.Encoding },
			func(e exporter.Logs, check startCheck) exporter.Logs { return logs{e, check} }),
			inner.LogsStability()),
		xexporter.WithMetrics(checked(inner.CreateMetrics, "metrics", known,
			func(c *kafkaexporter.Config) string { return c.Metrics.Encoding },
			func(e exporter.Metrics, check startCheck) exporter.Metrics { return metrics{e, check} }),
			inner.MetricsStability()),
		xexporter.WithProfiles(checked(inner.CreateProfiles, "profiles", known,
			func(c *kafkaexporter.Config) string { return c.Profiles.Encoding },
			func(e xexporter.Profiles, check startCheck) xexporter.Profiles { return profiles{e, check} }),
			inner.ProfilesStability()),
	)
}

// checked wraps the contrib factory's create function of one signal so
// that it refuses the signal on a topic another signal fills with a known
// extension's encoding, and, for such an encoding, a sending_queue in front
// of it or messages of it not placed by session; what it creates (wrapped
// by wrap) checks the signal's encoding at Start.
func checked[E any](
	create func(context.Context, exporter.Settings, component.Config) (E, error),
	signal string, known map[component.Type]bool, encoding func(*kafkaexporter.Config) string,
	wrap func(E, startCheck) E,
) func(context.Context, exporter.Settings, component.Config) (E, error) {
	return func(ctx context.Context, set exporter.Settings, cfg component.Config) (E, error) {
		var none E
		c := cfg.(*kafkaexporter.Config)
		err := checkSharedTopic(set.ID, signal, c, known)
		enc := encoding(c)
		if _, audit := knownExtension(enc, known); audit {
			err = errors.Join(err, checkQueue(set.ID, signal, enc, c), checkKeyed(set.ID, signal, enc, c))
		}
		if err != nil {
			return none, err
		}
		e, err := create(ctx, set, cfg)
		if err != nil {
			return none, err
		}
		return wrap(e, func(host component.Host) error {
			return checkEncoding(set.ID, signal, enc, known, host)
		}), nil
	}
}

// checkEncoding refuses an encoding that names an extension of a known
// type that the service does not run.
func checkEncoding(id component.ID, signal, encoding string, known map[component.Type]bool, host component.Host) error {
	ext, ok := knownExtension(encoding, known)
	if !ok {
		return nil // a built-in encoding, or one the exporter itself judges
	}
	if _, ok := host.GetExtensions()[ext]; ok {
		return nil
	}
	return fmt.Errorf("exporters::%s::%s::encoding: extension %q is not in service::extensions", id, signal, encoding)
}
