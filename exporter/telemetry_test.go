package sandboxauditexporter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
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
	tel := newTelemetry(tb)
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
			Data:        metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Value: 1234}}},
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
	}
	for _, w := range want {
		got, err := tt.GetMetric(w.Name)
		require.NoError(t, err)
		metricdatatest.AssertEqual(t, w, got, metricdatatest.IgnoreTimestamp())
	}
}
