package sandboxauditexporter

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/sandboxaudit/sandboxaudit/exporter/internal/metadata"
)

// TestTelemetryInstruments checks every instrument's name, unit, kind and
// attributes as documented in metadata.yaml, fed through the same paths the
// exporter uses (telemetry helpers and the HTTP sink observer).
func TestTelemetryInstruments(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	tb, err := metadata.NewTelemetryBuilder(tt.NewTelemetrySettings())
	require.NoError(t, err)
	tel := newTelemetry(tb, component.MustNewID("sandboxaudit"))
	obs := httpObserver{t: tel}
	ctx := context.Background()

	tel.written(ctx, sinkFile, 5)
	obs.Sent(ctx, 3)
	obs.Spooled(ctx, 2)
	obs.Replayed(ctx, 2)
	obs.Dropped(ctx, 1, "http_4xx")
	obs.Refused(ctx, 4, "spool_full")
	tel.dropped(ctx, reasonFileError, 6)
	obs.SpoolSize(4096)
	obs.SpoolSize(1234) // a gauge: the last value counts
	tel.skipped(ctx, reasonNotSandboxSpan, 7)
	tel.skipped(ctx, reasonInvalidSpan, 1)
	tel.skipped(ctx, reasonNotAuditEvent, 2)
	tel.skipped(ctx, reasonInvalidEvent, 3)
	tel.written(ctx, sinkFile, 0) // zero counts record nothing
	// seq_sessions_evicted is fed the mapper's cumulative count.
	require.Equal(t, int64(3), tel.seqSessionsEvicted(ctx, 3))
	require.Zero(t, tel.seqSessionsEvicted(ctx, 3))
	require.Zero(t, tel.seqSessionsEvicted(ctx, 2)) // a stale read adds nothing
	require.Equal(t, int64(4), tel.seqSessionsEvicted(ctx, 7))

	attrs := func(k, v string) attribute.Set { return attribute.NewSet(attribute.String(k, v)) }
	sum := func(dps ...metricdata.DataPoint[int64]) metricdata.Sum[int64] {
		return metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: dps}
	}
	want := []metricdata.Metrics{
		{
			Name:        "otelcol_sandboxaudit_exporter_events_written",
			Description: "Number of audit events a sink accepted (file written, or HTTP endpoint answered 2xx, including replays). [Alpha]",
			Unit:        "{event}",
			Data: sum(
				metricdata.DataPoint[int64]{Attributes: attrs("sink", "file"), Value: 5},
				metricdata.DataPoint[int64]{Attributes: attrs("sink", "http"), Value: 5}, // 3 live + 2 replayed
			),
		},
		{
			Name:        "otelcol_sandboxaudit_exporter_events_spooled",
			Description: "Number of audit events written to the HTTP sink's spool because delivery failed. [Alpha]",
			Unit:        "{event}",
			Data:        sum(metricdata.DataPoint[int64]{Value: 2}),
		},
		{
			Name:        "otelcol_sandboxaudit_exporter_events_replayed",
			Description: "Number of spooled audit events delivered by the replayer. [Alpha]",
			Unit:        "{event}",
			Data:        sum(metricdata.DataPoint[int64]{Value: 2}),
		},
		{
			Name:        "otelcol_sandboxaudit_exporter_events_dropped",
			Description: "Number of audit events a sink could not deliver nor keep, by reason. [Alpha]",
			Unit:        "{event}",
			Data: sum(
				metricdata.DataPoint[int64]{Attributes: attrs("reason", "http_4xx"), Value: 1},
				metricdata.DataPoint[int64]{Attributes: attrs("reason", "spool_full"), Value: 4},
				metricdata.DataPoint[int64]{Attributes: attrs("reason", "file_error"), Value: 6},
			),
		},
		{
			Name:        "otelcol_sandboxaudit_exporter_spool_size",
			Description: "Bytes held in the HTTP sink's spool, waiting for replay. [Alpha]",
			Unit:        "By",
			Data:        metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Attributes: attrs("exporter", "sandboxaudit"), Value: 1234}}},
		},
		{
			Name:        "otelcol_sandboxaudit_exporter_items_skipped",
			Description: "Number of spans and log records that did not become audit events, by reason. [Alpha]",
			Unit:        "{item}",
			Data: sum(
				metricdata.DataPoint[int64]{Attributes: attrs("reason", "not_sandbox_span"), Value: 7},
				metricdata.DataPoint[int64]{Attributes: attrs("reason", "invalid_span"), Value: 1},
				metricdata.DataPoint[int64]{Attributes: attrs("reason", "not_audit_event"), Value: 2},
				metricdata.DataPoint[int64]{Attributes: attrs("reason", "invalid_event"), Value: 3},
			),
		},
		{
			Name: "otelcol_sandboxaudit_exporter_seq_sessions_evicted",
			Description: "Number of sessions whose seq counter was dropped to keep within the span mapper's bound; " +
				"seqs then assigned to that session's spans without seq attributes start again at 1 and may repeat. [Alpha]",
			Unit: "{session}",
			Data: sum(metricdata.DataPoint[int64]{Value: 7}),
		},
	}
	for _, w := range want {
		got, err := tt.GetMetric(w.Name)
		require.NoError(t, err)
		metricdatatest.AssertEqual(t, w, got, metricdatatest.IgnoreTimestamp())
	}
}

// TestCumulativeCountConcurrent feeds increasing totals from many goroutines
// in whatever order they run: the increases must add up to the largest
// total, each unit reported once.
func TestCumulativeCountConcurrent(t *testing.T) {
	const goroutines, perG = 8, 500
	var c cumulativeCount
	var sum atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perG {
				sum.Add(c.advance(int64(i*goroutines + g + 1)))
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(goroutines*perG), sum.Load())
	assert.Zero(t, c.advance(goroutines*perG))
}
