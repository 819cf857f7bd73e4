package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/sandboxaudit/sandboxaudit/internal/sharedcomponent"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// sharedReceivers hands out one receiver per configured component, so that
// a sandboxaudit receiver listed in both a logs and a traces pipeline runs
// one HTTP server that feeds both.
type sharedReceivers = sharedcomponent.Map[*Config, *sandboxReceiver]

// NewFactory returns the factory of the sandboxaudit receiver.
func NewFactory() receiver.Factory {
	// The map lives in the factory, not the package.
	shared := sharedcomponent.NewMap[*Config, *sandboxReceiver]()
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithLogs(createLogs(shared), metadata.LogsStability),
		receiver.WithTraces(createTraces(shared), metadata.TracesStability),
	)
}

func acquire(shared *sharedReceivers, cfg component.Config, set receiver.Settings) (*sharedcomponent.Handle[*Config, *sandboxReceiver], error) {
	rCfg := cfg.(*Config)
	return shared.Acquire(rCfg, func() (*sandboxReceiver, error) { return newSandboxReceiver(rCfg, set) })
}

func createLogs(shared *sharedReceivers) receiver.CreateLogsFunc {
	return func(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
		h, err := acquire(shared, cfg, set)
		if err != nil {
			return nil, err
		}
		h.Unwrap().registerLogsConsumer(next)
		return h, nil
	}
}

func createTraces(shared *sharedReceivers) receiver.CreateTracesFunc {
	return func(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
		h, err := acquire(shared, cfg, set)
		if err != nil {
			return nil, err
		}
		h.Unwrap().registerTracesConsumer(next)
		return h, nil
	}
}
