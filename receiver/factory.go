package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// NewFactory returns the factory of the sandboxaudit receiver.
func NewFactory() receiver.Factory {
	shared := newSharedReceivers()
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithLogs(func(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
			r, err := shared.loadOrCreate(set.ID, func(release func()) (*sandboxReceiver, error) {
				return newSandboxReceiver(cfg.(*Config), set, release)
			})
			if err != nil {
				return nil, err
			}
			r.registerLogsConsumer(next)
			return r, nil
		}, metadata.LogsStability),
		receiver.WithTraces(func(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
			r, err := shared.loadOrCreate(set.ID, func(release func()) (*sandboxReceiver, error) {
				return newSandboxReceiver(cfg.(*Config), set, release)
			})
			if err != nil {
				return nil, err
			}
			r.registerTracesConsumer(next)
			return r, nil
		}, metadata.TracesStability),
	)
}
