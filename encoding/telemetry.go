package sandboxauditencoding // import "github.com/sandboxaudit/sandboxaudit/encoding"

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sandboxaudit/sandboxaudit/encoding/internal/metadata"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// Reasons, the "reason" attribute of items_skipped (the exporter's names).
const (
	reasonNotSandboxSpan = "not_sandbox_span"
	reasonInvalidSpan    = "invalid_span"
	reasonNotAuditEvent  = "not_audit_event"
	reasonInvalidEvent   = "invalid_event"
)

// telemetry wraps the instruments with the attribute sets they take.
type telemetry struct {
	tb *metadata.TelemetryBuilder
	// lastEvictions is the span mapper's cumulative eviction count last
	// reported; it only moves forward, so concurrent calls report each
	// eviction once.
	lastEvictions atomic.Int64
}

func (t *telemetry) skipped(ctx context.Context, reason string, n int) {
	if n > 0 {
		t.tb.SandboxauditEncodingItemsSkipped.Add(ctx, int64(n),
			metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reason))))
	}
}

// seqSessionsEvicted reports how much the mapper's cumulative eviction count
// grew since it was last reported, and returns that increase.
func (t *telemetry) seqSessionsEvicted(ctx context.Context, total int64) int64 {
	for {
		last := t.lastEvictions.Load()
		if total <= last {
			return 0
		}
		if t.lastEvictions.CompareAndSwap(last, total) {
			n := total - last
			t.tb.SandboxauditEncodingSeqSessionsEvicted.Add(ctx, n)
			return n
		}
	}
}

// redacted adds the cuts of one marshal call, by kind.
func (t *telemetry) redacted(ctx context.Context, c *redact.Counts) {
	c.Each(func(kind string, n int) {
		t.tb.SandboxauditEncodingSecretsRedacted.Add(ctx, int64(n),
			metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", kind))))
	})
}
