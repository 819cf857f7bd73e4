package sandboxtrace

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// NewSpanProcessor returns the SDK's BatchSpanProcessor for exp configured
// for an audit trail: it blocks while its queue is full instead of dropping
// spans (sdktrace.WithBlocking; the SDK default drops once 2,048 spans
// wait), it sends each batch in parts of at most ExportBytes, and every span
// lost to a failed export is counted and reported to the OTel error handler
// with the running total. opts are passed on after WithBlocking.
//
// A part that got no reply (the collector refused the connection, reset it
// or closed it before answering, as while it restarts) is sent again, with
// backoff from 100 ms to 2 s, until the export's timeout
// (sdktrace.WithExportTimeout, 30 s by default; without one, for 30 s).
// Meanwhile new spans wait in the queue. A part that got a reply never
// goes again whole: neither the 429, 502, 503 and 504 that otlptracehttp
// retries itself nor the Unavailable (a refused connection included) that
// otlptracegrpc retries itself is retried twice. A part the collector
// refused whole (a 400 or 413, over gRPC InvalidArgument or
// ResourceExhausted without RetryInfo: one span it cannot write, say over
// its max_line_bytes, and it writes none) goes again in halves, down to
// single spans, within the same timeout: only the spans it refuses are
// lost. Of a partial success, only the spans it rejected are counted lost.
func NewSpanProcessor(exp sdktrace.SpanExporter, opts ...sdktrace.BatchSpanProcessorOption) sdktrace.SpanProcessor {
	all := append([]sdktrace.BatchSpanProcessorOption{sdktrace.WithBlocking()}, opts...)
	return sdktrace.NewBatchSpanProcessor(&countingSpanExporter{SpanExporter: spanExporterOrMissing(exp)}, all...)
}

// countingSpanExporter sends a batch in parts of at most ExportBytes, sends
// a part again while it got no reply (exportRetrying), sends the halves of
// a part the collector refused whole (halving), and counts the spans of
// failed exports. The batch processor hands the returned error to
// otel.Handle, so the count reaches the error handler with each loss; it
// quotes no reply body (scrubReply).
type countingSpanExporter struct {
	sdktrace.SpanExporter
	lost atomic.Uint64
	// retryFor bounds the retries of an export without a deadline; 0 is
	// maxRetryTime (a test shortens it).
	retryFor time.Duration
}

func (c *countingSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	// One bound for the whole export: its parts and halves share it.
	h := retryingHalving(ctx, retryUntil(ctx, c.retryFor), func(ctx context.Context, part []sdktrace.ReadOnlySpan) error {
		return scrubReply(c.SpanExporter.ExportSpans(ctx, part))
	}, c.settle)
	size := func(i int) int { return spanSize(spans[i]) }
	return exportInParts(spans, size, h.export)
}

// settle counts the spans of part lost to err, if any (of a partial
// success, the rejected ones only), and describes the loss.
func (c *countingSpanExporter) settle(part []sdktrace.ReadOnlySpan, err error) error {
	if err == nil {
		return nil
	}
	n := lostOf(len(part), err)
	total := c.lost.Add(uint64(n))
	return fmt.Errorf("sandboxtrace: %s lost (%d in total): %w", plural.Count(n, "span"), total, err)
}
