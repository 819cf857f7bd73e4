package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
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
	giveUpEvicted  = "evicted"  // pushed out to stay within max_pending or max_pending_bytes
	giveUpReplaced = "replaced" // another start with the same session and span_id arrived
	giveUpShutdown = "shutdown"
	// Its finish arrived but could not share a span with it (another op,
	// version, trace or parent, or the same event_id); the finish became a
	// span of its own, so neither line changes.
	giveUpMismatched = "mismatched"
)

func newPairer(cfg *Config) *pairing.Pairer {
	return pairing.New(pairing.Config{MaxPending: cfg.MaxPending, MaxPendingBytes: cfg.MaxPendingBytes, PendingTimeout: cfg.PendingTimeout})
}

// deliverPairs feeds events to the pairing table and sends the spans of the
// operations that became ready (paired, orphan finishes, starts given up to
// stay within max_pending or replaced by a new start) to the traces pipeline.
func (r *sandboxReceiver) deliverPairs(ctx context.Context, events []auditevent.Event) error {
	ready := make([]pairing.Pair, 0, len(events))
	givenUp := map[string]int{}
	for i := range events {
		e := &events[i]
		n := len(ready)
		ready = r.pairs.Add(ready, e)
		for _, p := range ready[n:] {
			if p.Finish == nil {
				givenUp[giveUpReason(p.Start, e)]++
			}
		}
	}
	for _, reason := range []string{giveUpReplaced, giveUpEvicted, giveUpMismatched} {
		r.countGivenUp(ctx, reason, givenUp[reason])
	}
	return r.deliverSpans(ctx, ready)
}

// giveUpReason is why Add of e gave up start. The Pairer's Stats tell the
// reasons apart too, but it is shared by concurrent requests, so a
// before/after difference could count another request's starts. The key
// does it exactly: a start given up under e's own session and span_id was
// replaced by e, or, when e is a finish, did not fit it (an evicted start
// cannot have that key: it would have been the one replaced or paired).
func giveUpReason(start, e *auditevent.Event) string {
	switch {
	case start.SessionID != e.SessionID || start.SpanID != e.SpanID:
		return giveUpEvicted
	case e.Phase == auditevent.PhaseStart:
		return giveUpReplaced
	default:
		return giveUpMismatched
	}
}

// sweep gives up the starts that waited pending_timeout for their finish.
func (r *sandboxReceiver) sweep(ctx context.Context) {
	ready := r.pairs.Sweep(nil, time.Now())
	r.countGivenUp(ctx, giveUpTimeout, len(ready)) // Sweep returns only starts
	if err := r.deliverSpans(ctx, ready); err != nil {
		r.set.Logger.Warn("Traces pipeline refused incomplete spans of timed-out sandbox operations", zap.Error(err))
	}
}

// flushPending gives up every waiting start at shutdown, so none is lost
// silently.
func (r *sandboxReceiver) flushPending(ctx context.Context) {
	ready := r.pairs.Flush(nil)
	r.countGivenUp(ctx, giveUpShutdown, len(ready)) // Flush returns only starts
	if err := r.deliverSpans(ctx, ready); err != nil {
		r.set.Logger.Warn("Traces pipeline refused incomplete spans flushed at shutdown", zap.Error(err))
	}
}

// countGivenUp counts n starts that became incomplete spans for reason.
// They are counted when given up, whether or not the pipeline then takes
// the spans (spans_dropped counts those it refuses).
func (r *sandboxReceiver) countGivenUp(ctx context.Context, reason string, n int) {
	if n <= 0 {
		return
	}
	r.tel.SandboxauditReceiverPairsTimedOut.Add(ctx, int64(n), reasonAttr(reason))
}

// deliverSpans builds one span per ready operation and sends them on.
func (r *sandboxReceiver) deliverSpans(ctx context.Context, ready []pairing.Pair) error {
	if len(ready) == 0 {
		return nil
	}
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Scope().SetName(metadata.ScopeName)
	ss.Scope().SetVersion(r.set.BuildInfo.Version)
	spans := ss.Spans()
	spans.EnsureCapacity(len(ready))
	for _, p := range ready {
		spanmap.AppendSpan(spans, p.Start, p.Finish)
	}
	ctx = r.obsrep.StartTracesOp(ctx)
	err := r.nextTraces.ConsumeTraces(ctx, td)
	r.obsrep.EndTracesOp(ctx, formatSandboxEvent, len(ready), err)
	if err != nil {
		r.countSpansDropped(ctx, len(ready))
	}
	return err
}
