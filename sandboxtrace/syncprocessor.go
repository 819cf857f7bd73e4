package sandboxtrace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// ackKey carries an *ack through Logger.Emit to the processors: the log
// API has no return value, so the export result travels back this way.
type ackKey struct{}

// ack is the result of one emit: done stays false when the record never
// reached a processor of ours (a provider already shut down drops it first);
// synced is set by a SyncLogProcessor, with err its export's failure;
// proc is the LogProcessor that queued a best-effort record. timeout
// bounds a sync emitter's wait.
type ack struct {
	done    bool
	synced  bool
	err     error
	proc    *LogProcessor
	timeout time.Duration
}

func withAck(ctx context.Context, a *ack) context.Context {
	return context.WithValue(ctx, ackKey{}, a)
}

// DefaultSyncBatchSize is the most records a SyncLogProcessor sends in one
// export.
const DefaultSyncBatchSize = 512

// errNoSyncProcessor fails a sync operation whose provider has no
// SyncLogProcessor: nothing could acknowledge its record.
var errNoSyncProcessor = errors.New("the logger provider has no SyncLogProcessor to acknowledge the record")

// SyncLogProcessor exports each record it is given and makes the emitter
// wait for the result: the processor behind DeliverySync and
// DeliverySyncFinish. Records emitted while an export is in flight wait
// for it to end and then go together in the next export, as a group
// commit: one session's record never waits on a timer, and many sessions
// sharing one processor share its requests. Build a LoggerProvider with it
// and give that to every session with WithLoggerProvider.
//
// An export the collector refused whole (a 400 or 413, over gRPC
// InvalidArgument or ResourceExhausted without RetryInfo) goes again in
// halves within the export's timeout, so a record it cannot take fails
// alone. A partial success that rejected records fails every record of its
// request, as the reply does not say which; one that rejected none is
// reported and acknowledges them. An export that got no reply (the
// collector refused the connection, reset it or closed it before
// answering, as while it restarts) goes again, with backoff from 100 ms to
// 2 s, while its emitters wait and within the export's timeout: an
// operation waits out a short restart, and fails closed when its sync
// timeout ends. A request that got a reply never goes again whole.
type SyncLogProcessor struct {
	exp       sdklog.Exporter
	timeout   time.Duration // bounds an emitter's wait, and each Export
	batchSize int

	// inline: the exporter ends its request when its ctx ends, so an
	// emitter that finds no export in flight exports on its own goroutine
	// (no hand-off to the worker and back); see lead.
	inline bool

	mu       sync.Mutex
	waiting  []*syncRecord
	inflight []*syncRecord // the batch being exported
	busy     bool          // an export is in flight
	stopped  bool
	// leaders counts emitters exporting on their own goroutines (see
	// lead): Shutdown waits for them, as they export what the worker
	// left, before it shuts the exporter down.
	leaders sync.WaitGroup
	// watch is one timer for every deadline (see syncdeadline.go): a
	// timer per record would cost more than the rest of an emit.
	watch watchdog

	wake     chan struct{} // buffered: an export is wanted
	stop     chan struct{}
	done     chan struct{}
	shutOnce sync.Once
}

// syncRecord is one emitter's record and, once exported, its outcome.
type syncRecord struct {
	r        sdklog.Record
	size     int // recordSize of r
	deadline time.Time
	// result gets the export's outcome and, first when the deadline
	// passes, errSyncDeadline: room for both, so neither sender waits.
	result chan error
	// Guarded by the processor's mu.
	taken   bool // in an export
	expired bool // its wait is over: errSyncDeadline was sent, or its ctx ended
	left    bool // left out of a request sent again (leaveOut)
}

// NewSyncLogProcessor returns a started SyncLogProcessor exporting to exp.
// timeout bounds each export and each emitter's wait for it (<= 0:
// DefaultSyncTimeout); a session's WithSyncTimeout bounds its own
// emitters' wait.
func NewSyncLogProcessor(exp sdklog.Exporter, timeout time.Duration) *SyncLogProcessor {
	if timeout <= 0 {
		timeout = DefaultSyncTimeout
	}
	p := &SyncLogProcessor{
		exp:       logExporterOrMissing(exp),
		timeout:   timeout,
		batchSize: DefaultSyncBatchSize,
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	_, p.inline = p.exp.(ctxBoundExporter)
	p.watch.timer = time.AfterFunc(time.Hour, p.expire)
	p.watch.timer.Stop()
	go p.run()
	return p
}

// OnEmit exports r and waits for the result, within the emitter's sync
// timeout. The result goes to the emitter's ack, keeping a failure another
// SyncLogProcessor of the provider reported first; without an ack (a
// record not from a session) it is returned.
func (p *SyncLogProcessor) OnEmit(ctx context.Context, r *sdklog.Record) error {
	a, _ := ctx.Value(ackKey{}).(*ack)
	timeout := p.timeout
	if a != nil && a.timeout > 0 {
		timeout = a.timeout
	}
	err := p.send(ctx, r, timeout)
	if errors.Is(err, errSyncDeadline) {
		err = errSyncTimedOut
	}
	if a != nil {
		a.done, a.synced = true, true
		// With two SyncLogProcessors on one provider, the second's
		// success must not hide the first's failure.
		if a.err == nil {
			a.err = err
		}
		return nil // the caller gets it and fails the operation
	}
	return err
}

// send queues r for the next export and waits for its outcome, at most
// timeout. A nil from the exporter is an acknowledgement even when it came
// late. A record whose wait ends before an export took it is withdrawn,
// never sent.
func (p *SyncLogProcessor) send(ctx context.Context, r *sdklog.Record, timeout time.Duration) error {
	if err := ctx.Err(); err != nil {
		return contextEnded(err) // nothing was sent: the operation must not run
	}
	sr := &syncRecord{r: r.Clone(), size: recordSize(r), deadline: time.Now().Add(timeout), result: make(chan error, 2)}
	batch, err := p.enqueue(sr, timeout)
	if err != nil {
		return err
	}
	if len(batch) > 0 {
		p.leadUntil(ctx, sr, batch)
	} else {
		p.wakeWorker()
	}
	answered, err := awaitResult(ctx, sr)
	if answered {
		return err
	}
	return p.withdraw(sr, err)
}

// enqueue adds a record to the waiting ones and returns the batch this
// emitter exports inline, if it may.
func (p *SyncLogProcessor) enqueue(sr *syncRecord, timeout time.Duration) ([]*syncRecord, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil, errProcessorShutdown
	}
	p.waiting = append(p.waiting, sr)
	p.watch.arm(sr.deadline)
	// The export's bound must not outlast this emitter's, as its wait
	// cannot end before the export does.
	if !p.inline || p.busy || timeout < p.timeout {
		return nil, nil
	}
	batch := p.takeLocked(nil)
	if len(batch) > 0 {
		p.leaders.Add(1) // before stopped is set, so before Wait
	}
	return batch, nil
}

// leadUntil exports a batch on the emitter's goroutine. Its wait ends with
// ctx here too: a retry leaves its record out (sendRetrying), rather than
// running on to the export's bound.
func (p *SyncLogProcessor) leadUntil(ctx context.Context, sr *syncRecord, batch []*syncRecord) {
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		sr.expired = true
		p.mu.Unlock()
	})
	p.lead(batch)
	stop()
}

// awaitResult waits for a record's answer or its ctx; answered is false
// when the wait ended by deadline or ctx, with err saying which.
func awaitResult(ctx context.Context, sr *syncRecord) (answered bool, err error) {
	select {
	case err = <-sr.result:
		if !errors.Is(err, errSyncDeadline) {
			return true, err
		}
		if ctx.Err() != nil { // left out of a retry as its ctx ended
			err = contextEnded(ctx.Err())
		}
	case <-ctx.Done():
		err = contextEnded(ctx.Err())
	}
	return false, err
}

// withdraw takes back a record whose wait is over, so that no later
// request acknowledges it; an answer that came as time ran out still counts.
func (p *SyncLogProcessor) withdraw(sr *syncRecord, err error) error {
	p.mu.Lock()
	if !sr.taken {
		p.waiting = slices.DeleteFunc(p.waiting, func(w *syncRecord) bool { return w == sr })
		p.mu.Unlock()
		return err
	}
	// A refused request's halves leave it out, as its operation is told
	// it was not recorded.
	sr.expired = true
	p.mu.Unlock()
	select {
	case got := <-sr.result:
		if got == nil {
			return nil
		}
	default:
	}
	return err
}

// lead exports batch on the emitter's goroutine. What was queued
// meanwhile goes to the worker, or, once Shutdown stopped it, is exported
// here.
func (p *SyncLogProcessor) lead(batch []*syncRecord) {
	defer p.leaders.Done()
	for len(batch) > 0 {
		p.export(batch)
		p.mu.Lock()
		if !p.stopped || p.busy { // running, or the worker drains
			more := !p.stopped && len(p.waiting) > 0
			p.mu.Unlock()
			if more {
				p.wakeWorker()
			}
			return
		}
		batch = p.takeLocked(batch)
		p.mu.Unlock()
	}
}

func (p *SyncLogProcessor) wakeWorker() {
	select {
	case p.wake <- struct{}{}:
	default: // a wake is pending already
	}
}

// ctxBoundExporter is an exporter whose Export returns once its ctx ends.
type ctxBoundExporter interface{ endsWithContext() }

// run exports what waits, a batch at a time, until Shutdown; then it
// exports what still waits and ends. An exporter that ignores its ctx
// holds the worker (the emitters' own timeouts still bound their waits),
// so at most one export is left behind.
func (p *SyncLogProcessor) run() {
	defer close(p.done)
	var batch []*syncRecord
	for {
		stopping := false
		select {
		case <-p.wake:
		case <-p.stop:
			stopping = true
		}
		for batch = p.take(batch); len(batch) > 0; batch = p.take(batch) {
			p.export(batch)
		}
		if stopping {
			return
		}
	}
}

// take moves up to batchSize waiting records into batch, none while an
// emitter exports.
func (p *SyncLogProcessor) take(batch []*syncRecord) []*syncRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy {
		clear(batch)
		return batch[:0]
	}
	return p.takeLocked(batch)
}

// takeLocked is take with p.mu held and no export in flight; a batch it
// returns marks one in flight until export clears it. It takes up to
// batchSize records and ExportBytes of them, and at least one.
func (p *SyncLogProcessor) takeLocked(batch []*syncRecord) []*syncRecord {
	clear(batch)
	batch = batch[:0]
	n := partLen(min(len(p.waiting), p.batchSize), ExportBytes, func(i int) int { return p.waiting[i].size })
	for _, sr := range p.waiting[:n] {
		sr.taken = true
		batch = append(batch, sr)
	}
	rest := copy(p.waiting, p.waiting[n:])
	clear(p.waiting[rest:])
	p.waiting = p.waiting[:rest]
	p.inflight = batch
	p.busy = n > 0
	return batch
}

// export sends batch and hands each record its outcome; a panic in the
// exporter fails the batch instead of the process.
func (p *SyncLogProcessor) export(batch []*syncRecord) {
	p.exportSplitting(batch, time.Now().Add(p.timeout))
	p.mu.Lock()
	p.inflight = nil // the watchdog no longer expires them
	p.busy = false
	p.mu.Unlock()
}

// exportSplitting exports batch and hands each record its outcome. A batch
// the collector refused whole for its content goes again in halves
// (halving), so a record it cannot take (an event over its
// max_line_bytes) fails alone, not with the records of the other sessions
// that shared its request. Records whose wait ended are left out. The
// halves share the export's bound, deadline: an emitter exporting inline
// waits for them, and its timeout only covers one export.
func (p *SyncLogProcessor) exportSplitting(batch []*syncRecord, deadline time.Time) {
	h := halving[*syncRecord]{
		send: func(part []*syncRecord) error { return p.sendRetrying(part, deadline) },
		settle: func(part []*syncRecord, err error) error {
			err = acknowledged(err)
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, sr := range part {
				if sr.left {
					// Not in the request that got err: a success is not its.
					sr.result <- errSyncDeadline
				} else {
					sr.result <- err
				}
			}
			return nil
		},
		next: func(half []*syncRecord, refusal error) ([]*syncRecord, error) {
			half = p.leaveOut(half)
			if len(half) > 0 && !time.Now().Before(deadline) {
				return half, errors.Join(p.timeoutError(), refusal)
			}
			return half, nil
		},
	}
	_ = h.export(batch)
}

// sendRetrying exports part, and again while it got no reply
// (exportRetrying: a collector restarting) and some of its emitters still
// wait, until deadline: an operation waits out a short restart and still
// fails closed when its timeout ends. A retry leaves out the records whose
// wait ended, as their operations were told they were not recorded.
func (p *SyncLogProcessor) sendRetrying(part []*syncRecord, deadline time.Time) error {
	retry := false
	// The pauses need no ctx of their own: deadline bounds them, and a
	// Shutdown that cannot wait shuts the exporter down, which fails the
	// next attempt for good.
	return exportRetrying(context.Background(), deadline, func(context.Context) error {
		if retry {
			if part = p.leaveOut(part); len(part) == 0 {
				return errSyncDeadline // no one waits: nothing goes again
			}
		}
		retry = true
		return p.exportRecords(part, deadline)
	})
}

// acknowledged is the outcome for each record of an export that returned
// err. A partial success that rejected nothing is the collector's warning:
// it wrote every record, so it is reported and acknowledges them. One that
// rejected some fails every record of the request closed, as the reply
// does not say which were rejected, and an operation must not run unless
// its start event was written.
func acknowledged(err error) error {
	if n, ok := rejectedOnly(err); ok && n <= 0 {
		otel.Handle(err)
		return nil
	}
	return err
}

// leaveOut returns the records of batch whose emitters still wait, and
// marks the others left out of the request that goes again: a retry, or a
// refused request's half.
func (p *SyncLogProcessor) leaveOut(batch []*syncRecord) []*syncRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*syncRecord, 0, len(batch))
	for _, sr := range batch {
		if sr.expired {
			sr.left = true
		} else {
			out = append(out, sr)
		}
	}
	return out
}

// exportRecords exports batch, cancelled at deadline.
func (p *SyncLogProcessor) exportRecords(batch []*syncRecord, deadline time.Time) error {
	records := make([]sdklog.Record, len(batch))
	for i, sr := range batch {
		records[i] = sr.r
	}
	// The export's own bound rides on the watchdog too (see expire).
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	p.mu.Lock()
	p.watch.exportDeadline, p.watch.cancelExport = deadline, cancel
	p.watch.arm(p.watch.exportDeadline)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.watch.cancelExport = nil
		p.mu.Unlock()
	}()
	err := exportRecovering(ctx, p.exp, records)
	if err != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		// the bound, not the caller, ended it
		err = errors.Join(p.timeoutError(), err)
	}
	return err
}

// timeoutError is an export's bound passing.
func (p *SyncLogProcessor) timeoutError() error {
	return fmt.Errorf("export timeout %s exceeded: %w", p.timeout, context.DeadlineExceeded)
}

// Enabled reports true: every record is wanted.
func (p *SyncLogProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

// Shutdown exports the records still waiting (on the worker, or on an
// emitter's goroutine whose export was in flight), then shuts the exporter
// down once. When ctx ends first the exporter is shut down all the same (see
// shutdownExporter for a spent ctx), which ends an export in flight.
// Records emitted afterwards fail.
func (p *SyncLogProcessor) Shutdown(ctx context.Context) error {
	ctx = orBackground(ctx)
	var err error
	p.shutOnce.Do(func() {
		p.mu.Lock()
		p.stopped = true
		p.mu.Unlock()
		close(p.stop)
		drained := make(chan struct{})
		go func() {
			<-p.done
			p.leaders.Wait()
			close(drained)
		}()
		select {
		case <-drained:
		case <-ctx.Done():
			err = ctx.Err()
		}
		p.watch.timer.Stop()
		err = errors.Join(err, shutdownExporter(ctx, p.exp))
	})
	return err
}

// ForceFlush flushes the exporter: a sync record has left when its emit
// returns.
func (p *SyncLogProcessor) ForceFlush(ctx context.Context) error {
	return p.exp.ForceFlush(orBackground(ctx))
}

// errSyncTimedOut is an emitter's sync timeout passing; it is a
// context.DeadlineExceeded for callers that test for one.
var errSyncTimedOut = fmt.Errorf("sync deadline passed: %w", context.DeadlineExceeded)

// contextEnded names the emitter's own ctx as what ended its wait, apart
// from the sync timeout.
func contextEnded(err error) error {
	return fmt.Errorf("the operation's context ended: %w", err)
}

// result turns an ack into the operation's error, wrapping notRecorded.
func (a *ack) result(notRecorded error) error {
	switch {
	case !a.done:
		return errors.Join(notRecorded, errors.New("the log pipeline is shut down (or records nothing)"))
	case !a.synced:
		return errors.Join(notRecorded, errNoSyncProcessor)
	case errors.Is(a.err, errSyncTimedOut):
		return errors.Join(notRecorded, fmt.Errorf("sync timeout %s exceeded: %w", a.timeout, context.DeadlineExceeded))
	case a.err != nil:
		return errors.Join(notRecorded, a.err)
	}
	return nil
}
