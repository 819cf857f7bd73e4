package sandboxtrace

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// DefaultSyncTimeout bounds a sync start-event export when WithSyncTimeout
// is not given.
const DefaultSyncTimeout = 5 * time.Second

// Delivery is how a start event is delivered before its operation runs,
// as the Python sinks' mode/on_error (README.md, "Delivery modes").
type Delivery int

const (
	// DeliveryBestEffort queues the start event and runs the operation at
	// once; a record that is lost is counted and reported to the OTel error
	// handler.
	DeliveryBestEffort Delivery = iota
	// DeliverySync exports the start event and waits for the collector's
	// acknowledgement before the operation runs. When that fails or times
	// out the operation fails closed: its function is never called. The
	// finish event rides in the span.
	DeliverySync
	// DeliverySyncFinish is DeliverySync, and the finish event is exported
	// and acknowledged too before the operation returns: the promise of the
	// Python SDK's sync sink. A finish that is not acknowledged makes the
	// operation return an error wrapping ErrFinishNotRecorded.
	DeliverySyncFinish
)

// String returns the delivery's flag spelling.
func (d Delivery) String() string {
	switch d {
	case DeliveryBestEffort:
		return "best_effort"
	case DeliverySync:
		return "sync"
	case DeliverySyncFinish:
		return "sync_finish"
	}
	return fmt.Sprintf("Delivery(%d)", int(d))
}

// ParseDelivery reads "best_effort", "sync" or "sync_finish".
func ParseDelivery(s string) (Delivery, error) {
	for d := DeliveryBestEffort; d <= DeliverySyncFinish; d++ {
		if s == d.String() {
			return d, nil
		}
	}
	return 0, fmt.Errorf("delivery %q: want best_effort, sync or sync_finish", s)
}

// synchronous reports whether d waits for the collector's acknowledgement.
func (d Delivery) synchronous() bool { return d == DeliverySync || d == DeliverySyncFinish }

// ErrStartNotRecorded is in the chain of the error an operation returns when
// sync delivery could not get its start event acknowledged; the operation's
// function was not called.
var ErrStartNotRecorded = errors.New("start event not acknowledged; operation not run")

// ErrFinishNotRecorded is in the chain of the error an operation returns
// when DeliverySyncFinish could not get its finish event acknowledged; the
// operation ran, and its span still carries the finish.
var ErrFinishNotRecorded = errors.New("finish event not acknowledged")

// WithLoggerProvider emits every start event as a log record through lp
// before the operation runs (the provider is the caller's to flush and shut
// down). For best-effort delivery build it with NewLogProcessor, so a full
// queue blocks instead of dropping records; for sync delivery with
// NewSyncLogProcessor, which acknowledges each record (without one, every
// operation fails closed). Sessions that share one sync provider share its
// exports.
func WithLoggerProvider(lp log.LoggerProvider) Option {
	return func(c *config) { c.loggerProvider = lp }
}

// WithLogExporter emits every start event through exp (for example
// otlploghttp) before the operation runs. The session owns the log pipeline
// it builds around exp: Session.Shutdown flushes it and shuts exp down.
// Best-effort delivery queues records in a NewLogProcessor; sync delivery
// exports each record itself and waits for the result.
func WithLogExporter(exp sdklog.Exporter) Option {
	return func(c *config) { c.logExporter = exp }
}

// WithDelivery sets the start-event delivery mode (default
// DeliveryBestEffort). DeliverySync and DeliverySyncFinish need
// WithLogExporter, or WithLoggerProvider with a NewSyncLogProcessor.
func WithDelivery(d Delivery) Option {
	return func(c *config) { c.delivery = d }
}

// WithSyncTimeout bounds each sync start-event export (<= 0:
// DefaultSyncTimeout).
func WithSyncTimeout(d time.Duration) Option {
	return func(c *config) { c.syncTimeout = d }
}

// logPipeline is what the write-ahead options give a session.
type logPipeline struct {
	logger log.Logger // emits the start records; nil: none configured
	// provider and processor are the pipeline the session built (nil when
	// the caller owns it).
	provider  *sdklog.LoggerProvider
	processor sdklog.Processor
}

// logPipeline checks the write-ahead options and builds what they ask for.
func (c *config) logPipeline() (logPipeline, error) {
	if err := c.checkDelivery(); err != nil {
		return logPipeline{}, err
	}
	if c.syncTimeout <= 0 {
		c.syncTimeout = DefaultSyncTimeout
	}
	var lp logPipeline
	switch {
	case c.loggerProvider != nil:
		return logPipeline{logger: c.loggerProvider.Logger(ScopeName)}, nil
	case c.logExporter != nil && c.delivery.synchronous():
		lp.processor = NewSyncLogProcessor(c.logExporter, c.syncTimeout)
	case c.logExporter != nil:
		lp.processor = NewLogProcessor(c.logExporter)
	default:
		return lp, nil
	}
	lp.provider = sdklog.NewLoggerProvider(sdklog.WithProcessor(lp.processor))
	lp.logger = lp.provider.Logger(ScopeName)
	return lp, nil
}

// checkDelivery refuses write-ahead options that are nil or do not go
// together.
func (c *config) checkDelivery() error {
	if c.loggerProvider != nil && isNil(c.loggerProvider) {
		return errors.New("sandboxtrace: WithLoggerProvider: got a nil provider")
	}
	if c.logExporter != nil && isNil(c.logExporter) {
		return errors.New("sandboxtrace: WithLogExporter: got a nil exporter")
	}
	if c.loggerProvider != nil && c.logExporter != nil {
		return errors.New("sandboxtrace: WithLoggerProvider and WithLogExporter are exclusive")
	}
	if c.delivery < DeliveryBestEffort || c.delivery > DeliverySyncFinish {
		return fmt.Errorf("sandboxtrace: WithDelivery: unknown delivery %d", c.delivery)
	}
	if c.delivery.synchronous() && c.logExporter == nil && c.loggerProvider == nil {
		return fmt.Errorf("sandboxtrace: WithDelivery(%s) needs WithLogExporter, or WithLoggerProvider "+
			"with a NewSyncLogProcessor: an acknowledgement comes only from an export the session waits for", c.delivery)
	}
	return nil
}
