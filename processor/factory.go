package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/processor/internal/metadata"
)

// NewFactory creates a factory for the sandboxaudit processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
		processor.WithLogs(createLogs, metadata.LogsStability),
	)
}

// createDefaultConfig sets no policy level: the reference default policy
// applies, which removes all raw exec output. Tool-call attributes are on,
// as sandboxtrace adds them by default.
func createDefaultConfig() component.Config {
	return &Config{GenAIAttributes: true}
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := newPolicy(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := newPolicy(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}

// newPolicy resolves cfg's policy for one pipeline, warning where redaction
// is off.
func newPolicy(set processor.Settings, cfg *Config) (*spanPolicy, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("sandboxaudit processor: telemetry: %w", err)
	}
	p, err := newSpanPolicy(cfg, tb)
	if err != nil {
		return nil, fmt.Errorf("sandboxaudit processor: %w", err)
	}
	if off := p.policies.RedactionOff(); len(off) > 0 {
		set.Logger.Warn("payload_policy redact is off: credentials in event data, errors and output go on in clear",
			zap.Strings("ops", off))
	}
	return p, nil
}
