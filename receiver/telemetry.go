package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"context"
	"net/netip"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
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
// be set. The point names the receiver: every sandboxaudit receiver of the
// collector observes the one instrument, and a point without its id would
// hold whichever observed last.
func (r *sandboxReceiver) registerPendingGauge() error {
	id := metric.WithAttributeSet(attribute.NewSet(attribute.String("receiver", r.set.ID.String())))
	return r.tel.RegisterSandboxauditReceiverPairsPendingCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(int64(r.pairs.Len()), id)
		return nil
	})
}

// connEvicted counts a connection the connection listener closed at
// max_connections to make room for one of another client address. The log
// is at Debug (the collector's logger samples a flood of them): the metric
// is what an operator watches; the log says which client lost connections.
func (r *sandboxReceiver) connEvicted(reason string, client netip.Addr) {
	r.tel.SandboxauditReceiverConnectionsEvicted.Add(context.Background(), 1, reasonAttr(reason))
	r.set.Logger.Debug("Closed a connection to make room for another client's (max_connections)",
		zap.String("reason", reason), zap.Stringer("client", client))
}

// reasonAttr is the reason attribute of the counters that have one.
func reasonAttr(reason string) metric.AddOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reason)))
}
