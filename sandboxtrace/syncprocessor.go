package sandboxtrace

import (
	"context"
	"errors"
	"sync"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// ackKey carries an *ack through Logger.Emit to the syncProcessor: the log
// API has no return value, so the export result travels back this way.
type ackKey struct{}

// ack is the result of one sync export; done stays false when the record
// never reached the processor (a provider already shut down).
type ack struct {
	done bool
	err  error
}

func withAck(ctx context.Context, a *ack) context.Context {
	return context.WithValue(ctx, ackKey{}, a)
}

// syncProcessor exports each record at once, within timeout, and hands the
// result to the emitter's ack.
type syncProcessor struct {
	exp     sdklog.Exporter
	timeout time.Duration
	// mu keeps Export calls apart, as the Exporter contract asks.
	mu sync.Mutex
}

func newSyncProcessor(exp sdklog.Exporter, timeout time.Duration) *syncProcessor {
	return &syncProcessor{exp: exp, timeout: timeout}
}

func (p *syncProcessor) OnEmit(ctx context.Context, r *sdklog.Record) error {
	a, _ := ctx.Value(ackKey{}).(*ack)
	tctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	p.mu.Lock()
	err := p.exp.Export(tctx, []sdklog.Record{*r})
	p.mu.Unlock()
	if err == nil && tctx.Err() != nil {
		err = tctx.Err()
	}
	if a != nil {
		a.done, a.err = true, err
		return nil // the caller gets it and fails the operation
	}
	return err
}

func (p *syncProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

func (p *syncProcessor) Shutdown(ctx context.Context) error { return p.exp.Shutdown(ctx) }

func (p *syncProcessor) ForceFlush(ctx context.Context) error { return p.exp.ForceFlush(ctx) }

// result turns an ack into the operation's error.
func (a *ack) result(timeout time.Duration) error {
	switch {
	case !a.done:
		return errors.Join(ErrStartNotRecorded, errors.New("the log pipeline is shut down"))
	case errors.Is(a.err, context.DeadlineExceeded):
		return errors.Join(ErrStartNotRecorded, errors.New("sync timeout "+timeout.String()+" exceeded"), a.err)
	case a.err != nil:
		return errors.Join(ErrStartNotRecorded, a.err)
	}
	return nil
}
