package sandboxtrace

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// ackKey carries an *ack through Logger.Emit to the syncProcessor: the log
// API has no return value, so the export result travels back this way.
type ackKey struct{}

// ack is the result of one emit: done stays false when the record never
// reached a processor of ours (a provider already shut down drops it first);
// err is a sync export's failure; proc is the LogProcessor that queued a
// best-effort record.
type ack struct {
	done bool
	err  error
	proc *LogProcessor
}

func withAck(ctx context.Context, a *ack) context.Context {
	return context.WithValue(ctx, ackKey{}, a)
}

// syncProcessor exports each record at once, within timeout, and hands the
// result to the emitter's ack.
type syncProcessor struct {
	exp     sdklog.Exporter
	timeout time.Duration
	// turn keeps Export calls apart, as the Exporter contract asks; a
	// channel, so that waiting for it is bounded by the timeout too.
	turn     chan struct{}
	shutOnce sync.Once
}

func newSyncProcessor(exp sdklog.Exporter, timeout time.Duration) *syncProcessor {
	return &syncProcessor{exp: exp, timeout: timeout, turn: make(chan struct{}, 1)}
}

func (p *syncProcessor) OnEmit(ctx context.Context, r *sdklog.Record) error {
	a, _ := ctx.Value(ackKey{}).(*ack)
	tctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	err := p.export(tctx, r.Clone())
	if a != nil {
		a.done, a.err = true, err
		return nil // the caller gets it and fails the operation
	}
	return err
}

// export exports r within ctx. A nil from the exporter is an
// acknowledgement even when it came late. An exporter that ignores ctx is
// left to finish on its own goroutine (holding the turn, so at most one is
// left behind): the operation must not wait past the timeout.
func (p *syncProcessor) export(ctx context.Context, r sdklog.Record) error {
	if err := ctx.Err(); err != nil {
		return err // nothing was sent: the operation must not run
	}
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-p.turn }()
		defer func() {
			// On this goroutine a panic would kill the process; the
			// emitter could recover it before the export moved here.
			if v := recover(); v != nil {
				done <- fmt.Errorf("sandboxtrace: log exporter panicked: %v", v)
			}
		}()
		done <- p.exp.Export(ctx, []sdklog.Record{r})
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		select {
		case err := <-done: // it answered as time ran out
			return err
		default:
			return ctx.Err()
		}
	}
}

func (p *syncProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

// Shutdown shuts the exporter down once; see shutdownExporter for a spent
// ctx.
func (p *syncProcessor) Shutdown(ctx context.Context) error {
	var err error
	p.shutOnce.Do(func() { err = shutdownExporter(ctx, p.exp) })
	return err
}

func (p *syncProcessor) ForceFlush(ctx context.Context) error { return p.exp.ForceFlush(ctx) }

// result turns an ack into the operation's error, wrapping notRecorded.
func (a *ack) result(notRecorded error, timeout time.Duration) error {
	switch {
	case !a.done:
		return errors.Join(notRecorded, errors.New("the log pipeline is shut down"))
	case errors.Is(a.err, context.DeadlineExceeded):
		return errors.Join(notRecorded, errors.New("sync timeout "+timeout.String()+" exceeded"), a.err)
	case a.err != nil:
		return errors.Join(notRecorded, a.err)
	}
	return nil
}
