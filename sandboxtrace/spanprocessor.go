package sandboxtrace

import (
	"context"
	"fmt"
	"sync/atomic"

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
// Meanwhile new spans wait in the queue. A reply is never sent
// again: a refusal (a 400, say) is final, and the 429, 502, 503 and 504
// that otlptracehttp retries itself are not retried twice.
func NewSpanProcessor(exp sdktrace.SpanExporter, opts ...sdktrace.BatchSpanProcessorOption) sdktrace.SpanProcessor {
	all := append([]sdktrace.BatchSpanProcessorOption{sdktrace.WithBlocking()}, opts...)
	return sdktrace.NewBatchSpanProcessor(&countingSpanExporter{SpanExporter: exp}, all...)
}

// countingSpanExporter sends a batch in parts of at most ExportBytes, sends
// a part again while it got no reply (exportRetrying), and counts the spans
// of failed exports. The batch processor hands the returned error to
// otel.Handle, so the count reaches the error handler with each loss.
type countingSpanExporter struct {
	sdktrace.SpanExporter
	lost atomic.Uint64
}

func (c *countingSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	size := func(i int) int { return spanSize(spans[i]) }
	return exportInParts(spans, size, func(part []sdktrace.ReadOnlySpan) error {
		err := exportRetrying(ctx, func(ctx context.Context) error { return c.SpanExporter.ExportSpans(ctx, part) })
		if err != nil {
			total := c.lost.Add(uint64(len(part)))
			err = fmt.Errorf("sandboxtrace: %s lost (%d in total): %w", plural.Count(len(part), "span"), total, err)
		}
		return err
	})
}
