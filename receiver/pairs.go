package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/pairing"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// formatSandboxEvent is the obsreport format of spans built from events.
const formatSandboxEvent = "sandbox_event"

// Why a start became an incomplete span, the "reason" attribute of the
// pairs_timed_out metric.
const (
	giveUpTimeout  = "timeout"
	giveUpEvicted  = "evicted" // max_pending reached, or replaced by a new start
	giveUpShutdown = "shutdown"
)

func newPairer(cfg *Config) *pairing.Pairer {
	return pairing.New(pairing.Config{MaxPending: cfg.MaxPending, PendingTimeout: cfg.PendingTimeout})
}

// observePending reports the pending pairs gauge.
func (r *sandboxReceiver) observePending(_ context.Context, o metric.Int64Observer) error {
	o.Observe(int64(r.pairs.Len()))
	return nil
}

// deliverPairs feeds events to the pairing table and sends the spans of the
// operations that became ready (paired, orphan finishes, starts evicted to
// stay within max_pending) to the traces pipeline.
func (r *sandboxReceiver) deliverPairs(ctx context.Context, events []auditevent.Event) error {
	ready := make([]pairing.Pair, 0, len(events))
	for i := range events {
		ready = r.pairs.Add(ready, &events[i])
	}
	return r.deliverSpans(ctx, ready, giveUpEvicted)
}

// sweep gives up the starts that waited pending_timeout for their finish.
func (r *sandboxReceiver) sweep(ctx context.Context) {
	ready := r.pairs.Sweep(nil, time.Now())
	if err := r.deliverSpans(ctx, ready, giveUpTimeout); err != nil {
		r.set.Logger.Warn("Traces pipeline refused incomplete spans of timed-out sandbox operations", zap.Error(err))
	}
}

// flushPending gives up every waiting start at shutdown, so none is lost
// silently.
func (r *sandboxReceiver) flushPending(ctx context.Context) {
	ready := r.pairs.Flush(nil)
	if err := r.deliverSpans(ctx, ready, giveUpShutdown); err != nil {
		r.set.Logger.Warn("Traces pipeline refused incomplete spans flushed at shutdown", zap.Error(err))
	}
}

// deliverSpans builds one span per ready operation and sends them on. Starts
// without their finish are counted under reason.
func (r *sandboxReceiver) deliverSpans(ctx context.Context, ready []pairing.Pair, reason string) error {
	if len(ready) == 0 {
		return nil
	}
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Scope().SetName(metadata.ScopeName)
	ss.Scope().SetVersion(r.set.BuildInfo.Version)
	spans := ss.Spans()
	spans.EnsureCapacity(len(ready))
	incomplete := 0
	for _, p := range ready {
		if p.Finish == nil {
			incomplete++
		}
		spanmap.AppendSpan(spans, p.Start, p.Finish)
	}
	if incomplete > 0 {
		r.tel.ReceiverSandboxauditPairsTimedOut.Add(ctx, int64(incomplete),
			metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reason))))
	}
	ctx = r.obsrep.StartTracesOp(ctx)
	err := r.nextTraces.ConsumeTraces(ctx, td)
	r.obsrep.EndTracesOp(ctx, formatSandboxEvent, len(ready), err)
	if err != nil {
		r.tel.ReceiverSandboxauditSpansDropped.Add(ctx, int64(len(ready)))
	}
	return err
}
