package sandboxtrace

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// Defaults of NewLogProcessor.
const (
	DefaultLogQueueSize = 2048
	DefaultLogBatchSize = 512
	// DefaultLogExportInterval 0: a record is exported as soon as the
	// worker is free (records queued meanwhile go in the next export), so
	// a start event has left the process milliseconds after its operation
	// began, not up to a ticker's second later: a process killed
	// mid-operation has sent it.
	DefaultLogExportInterval time.Duration = 0
	DefaultLogExportTimeout                = 30 * time.Second
)

// errProcessorShutdown is why a record emitted after Shutdown is lost.
var errProcessorShutdown = errors.New("log processor is shut down")

// LogProcessorOption configures NewLogProcessor.
type LogProcessorOption func(*LogProcessor)

// WithLogQueueSize sets how many records wait for export before OnEmit
// blocks (<= 0: DefaultLogQueueSize).
func WithLogQueueSize(n int) LogProcessorOption {
	return func(p *LogProcessor) {
		if n > 0 {
			p.queueSize = n
		}
	}
}

// WithLogBatchSize sets the most records per Export (<= 0:
// DefaultLogBatchSize).
func WithLogBatchSize(n int) LogProcessorOption {
	return func(p *LogProcessor) {
		if n > 0 {
			p.batchSize = n
		}
	}
}

// WithLogExportInterval lets a record wait up to d for a full batch
// (fewer, larger exports; a kill loses what waits). <= 0: export at once.
func WithLogExportInterval(d time.Duration) LogProcessorOption {
	return func(p *LogProcessor) { p.interval = max(d, 0) }
}

// WithLogExportTimeout bounds one Export (<= 0: DefaultLogExportTimeout).
func WithLogExportTimeout(d time.Duration) LogProcessorOption {
	return func(p *LogProcessor) {
		if d > 0 {
			p.timeout = d
		}
	}
}

// LogProcessor is a batching log processor that, unlike the SDK's
// BatchProcessor (which drops the oldest records when its queue is full and
// only logs a warning), blocks the emitter while its queue is full, like
// sdktrace.WithBlocking. A record can still be lost when its export fails
// (an exporter that panics included) or when it is emitted after Shutdown;
// each loss is counted and reported to the OTel error handler (otel.Handle)
// with the running total. An export the collector refused whole (a 400 or
// 413, over gRPC InvalidArgument or ResourceExhausted without RetryInfo)
// goes again in halves within its timeout, so only the records it refuses
// are lost. Of a partial success, only the records it rejected are
// counted lost. An export that got no reply (the collector refused the
// connection, reset it or closed it before answering, as while it
// restarts) goes again, with backoff from 100 ms to 2 s, within its
// timeout (WithLogExportTimeout); meanwhile new records wait in the queue.
type LogProcessor struct {
	exp       sdklog.Exporter
	queueSize int
	batchSize int
	interval  time.Duration
	timeout   time.Duration

	// mu orders OnEmit's enqueue against Shutdown, so no record enters the
	// queue after the worker's final drain. stopping ends when
	// Shutdown's ctx ends, so an emitter waiting on a full queue behind a
	// stuck export gives up its read lock then, and the export in flight
	// stops retrying.
	mu        sync.RWMutex
	stopped   bool
	stopping  context.Context
	beginStop context.CancelFunc

	// queue holds pointers: a Record is about 600 bytes, and a channel of
	// them would allocate its whole capacity (over a megabyte) up front, in
	// every session built with WithLogExporter.
	queue chan *sdklog.Record
	flush chan chan error
	stop  chan struct{}
	done  chan struct{}
	lost  atomic.Uint64
}

// NewLogProcessor returns a started LogProcessor exporting to exp.
func NewLogProcessor(exp sdklog.Exporter, opts ...LogProcessorOption) *LogProcessor {
	p := &LogProcessor{
		exp:       logExporterOrMissing(exp),
		queueSize: DefaultLogQueueSize,
		batchSize: DefaultLogBatchSize,
		interval:  DefaultLogExportInterval,
		timeout:   DefaultLogExportTimeout,
		flush:     make(chan chan error),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	for _, opt := range opts {
		opt(p)
	}
	p.queue = make(chan *sdklog.Record, p.queueSize)
	p.stopping, p.beginStop = context.WithCancel(context.Background())
	go p.run()
	return p
}

// Lost returns how many records were lost so far.
func (p *LogProcessor) Lost() uint64 { return p.lost.Load() }

// OnEmit queues a copy of r, waiting while the queue is full.
func (p *LogProcessor) OnEmit(ctx context.Context, r *sdklog.Record) error {
	if a, ok := ctx.Value(ackKey{}).(*ack); ok {
		a.done, a.proc = true, p // queued, or lost and counted below
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.stopped {
		return p.lose(1, errProcessorShutdown)
	}
	rec := r.Clone()
	select {
	case p.queue <- &rec: // room: queued even while stopping
		return nil
	default:
	}
	select {
	case p.queue <- &rec:
		return nil
	case <-p.stopping.Done():
		return p.lose(1, errProcessorShutdown)
	}
}

// Enabled reports true: every record is wanted.
func (p *LogProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

// ForceFlush exports every queued record, then flushes the exporter.
func (p *LogProcessor) ForceFlush(ctx context.Context) error {
	ctx = orBackground(ctx)
	reply := make(chan error, 1)
	select {
	case p.flush <- reply:
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return errors.Join(err, p.exp.ForceFlush(ctx))
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown exports what is queued and shuts the exporter down. Emitters
// waiting on a full queue get room as the worker exports; if ctx ends
// first they are let go, their records lost (counted), and the export in
// flight ends without another attempt. Records emitted after Shutdown are
// lost (counted and reported).
func (p *LogProcessor) Shutdown(ctx context.Context) error {
	ctx = orBackground(ctx)
	defer context.AfterFunc(ctx, p.beginStop)()
	p.mu.Lock() // once the emitters in progress have queued or given up
	already := p.stopped
	p.stopped = true
	p.mu.Unlock()
	if already {
		return nil
	}
	close(p.stop)
	select {
	case <-p.done:
		return shutdownExporter(ctx, p.exp)
	case <-ctx.Done():
		// Shutting the exporter down (its contract allows this during an
		// Export) ends the export the worker is stuck in.
		return errors.Join(ctx.Err(), shutdownExporter(ctx, p.exp))
	}
}

// shutdownExporter shuts exp down within ctx or, when ctx has ended,
// within a second of its own: a spent ctx must not leave the exporter's
// connections open.
func shutdownExporter(ctx context.Context, exp sdklog.Exporter) error {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
	}
	return exp.Shutdown(ctx)
}

// initialLogBatch is the capacity a LogProcessor's batch starts with.
const initialLogBatch = 16

func (p *LogProcessor) run() {
	defer close(p.done)
	// The batch grows to what arrives together, not to the most an export
	// may take, for the same reason as the queue.
	batch := make([]sdklog.Record, 0, min(p.batchSize, initialLogBatch))
	var tick <-chan time.Time // nil, never ready, when exporting at once
	if p.interval > 0 {
		ticker := time.NewTicker(p.interval)
		defer ticker.Stop()
		tick = ticker.C
	}
	for {
		select {
		case r := <-p.queue:
			batch = append(batch, *r)
			switch {
			case tick == nil:
				batch, _ = p.drain(batch)
			case len(batch) >= p.batchSize:
				batch, _ = p.export(batch)
			}
		case <-tick:
			batch, _ = p.export(batch)
		case reply := <-p.flush:
			var err error
			batch, err = p.drain(batch)
			reply <- err
		case <-p.stop:
			_, _ = p.drain(batch)
			return
		}
	}
}

// drain exports batch and everything queued, a batch at a time.
func (p *LogProcessor) drain(batch []sdklog.Record) ([]sdklog.Record, error) {
	var errs []error
	for {
		if len(batch) >= p.batchSize {
			var err error
			batch, err = p.export(batch)
			errs = append(errs, err)
		}
		select {
		case r := <-p.queue:
			batch = append(batch, *r)
		default:
			var err error
			batch, err = p.export(batch)
			return batch, errors.Join(append(errs, err)...)
		}
	}
}

// export sends batch, in parts of at most ExportBytes; a failure
// loses its part's records, which is reported.
func (p *LogProcessor) export(batch []sdklog.Record) ([]sdklog.Record, error) {
	size := func(i int) int { return recordSize(&batch[i]) }
	err := exportInParts(batch, size, p.exportPart)
	clear(batch)
	return batch[:0], err
}

// exportPart runs one bounded Export of part. A part that got no reply
// goes again (exportRetrying), and a part the collector refused whole
// goes again in halves (halving), both within the same bound: a collector
// restart loses nothing, and one record it cannot take loses only itself.
func (p *LogProcessor) exportPart(part []sdklog.Record) error {
	// Shutdown's ctx ending ends it: Shutdown has returned, and the
	// worker must not retry for the rest of the timeout behind it.
	ctx, cancel := context.WithTimeout(p.stopping, p.timeout)
	defer cancel()
	h := retryingHalving(ctx, retryUntil(ctx, 0), func(ctx context.Context, part []sdklog.Record) error {
		return exportRecovering(ctx, p.exp, part)
	}, p.settle)
	return h.export(part)
}

// settle counts the records of part lost to err, if any (of a partial
// success, the rejected ones only), and reports the loss.
func (p *LogProcessor) settle(part []sdklog.Record, err error) error {
	if err != nil {
		err = p.lose(lostOf(len(part), err), err)
		otel.Handle(err)
	}
	return err
}

// exportRecovering is exp.Export, where a panic in the exporter fails the
// export instead of ending the process from a processor's worker. Its
// error quotes no reply body (scrubReply): both log processors hand it on.
func exportRecovering(ctx context.Context, exp sdklog.Exporter, records []sdklog.Record) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("log exporter panicked: %v", v)
		}
	}()
	return scrubReply(exp.Export(ctx, records))
}

// lose counts n lost records and describes the loss.
func (p *LogProcessor) lose(n int, cause error) error {
	total := p.lost.Add(uint64(n))
	return fmt.Errorf("sandboxtrace: %s lost (%d in total): %w", plural.Count(n, "log record"), total, cause)
}
