package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"context"

	"go.opentelemetry.io/otel/metric"
)

// The receiver's own metrics are recorded here and in recordRequest,
// countDelivery, countRefused and countGivenUp; TestMetadataMatchesCode
// records each through these methods and checks it against metadata.yaml.

func (r *sandboxReceiver) countDuplicates(ctx context.Context, n int) {
	if n > 0 {
		r.tel.SandboxauditReceiverDuplicatesDropped.Add(ctx, int64(n))
	}
}

func (r *sandboxReceiver) countSpansSkipped(ctx context.Context, n int) {
	if n > 0 {
		r.tel.SandboxauditReceiverSpansSkipped.Add(ctx, int64(n))
	}
}

func (r *sandboxReceiver) countSpansDropped(ctx context.Context, n int) {
	if n > 0 {
		r.tel.SandboxauditReceiverSpansDropped.Add(ctx, int64(n))
	}
}

// registerPendingGauge reports the size of the pairing table; r.pairs must
// be set.
func (r *sandboxReceiver) registerPendingGauge() error {
	return r.tel.RegisterSandboxauditReceiverPairsPendingCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(int64(r.pairs.Len()))
		return nil
	})
}
