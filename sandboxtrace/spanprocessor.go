package sandboxtrace

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// NewSpanProcessor returns the SDK's BatchSpanProcessor for exp configured
// for an audit trail: it blocks while its queue is full instead of dropping
// spans (sdktrace.WithBlocking; the SDK default drops once 2,048 spans
// wait), it sends each batch in parts of at most ExportBytes, and every span
// lost to a failed export is counted and reported to the OTel error handler
// with the running total. opts are passed on after WithBlocking.
func NewSpanProcessor(exp sdktrace.SpanExporter, opts ...sdktrace.BatchSpanProcessorOption) sdktrace.SpanProcessor {
	all := append([]sdktrace.BatchSpanProcessorOption{sdktrace.WithBlocking()}, opts...)
	return sdktrace.NewBatchSpanProcessor(&countingSpanExporter{SpanExporter: exp}, all...)
}

// countingSpanExporter sends a batch in parts of at most ExportBytes and
// counts the spans of failed exports. The batch processor hands the
// returned error to otel.Handle, so the count reaches the error handler
// with each loss.
type countingSpanExporter struct {
	sdktrace.SpanExporter
	lost atomic.Uint64
}

func (c *countingSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	var errs []error
	for len(spans) > 0 {
		n := spansPartLen(spans, ExportBytes)
		if err := c.SpanExporter.ExportSpans(ctx, spans[:n]); err != nil {
			total := c.lost.Add(uint64(n))
			errs = append(errs, fmt.Errorf("sandboxtrace: %d span(s) lost (%d in total): %w", n, total, err))
		}
		spans = spans[n:]
	}
	return errors.Join(errs...)
}
