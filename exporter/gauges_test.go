package sandboxauditexporter

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// Two sandboxaudit exporters in one collector share the gauge instruments:
// each keeps its own point, by exporter id, so one exporter's empty spool
// does not hide the other's full one.
func TestSpoolSizeOfTwoExporters(t *testing.T) {
	rec := newRecorder(t, func(int) int { return http.StatusServiceUnavailable })
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	start := func(name string) {
		cfg := syncConfig()
		hc := withHTTP(cfg, rec.srv.URL, "ndjson", auditevent.PolicyOverride{})
		sc := hc.Spool.GetOrInsertDefault()
		sc.Path = filepath.Join(t.TempDir(), "spool.jsonl")
		sc.ReplayInterval = time.Hour
		set := exportertest.NewNopSettings(typ)
		set.ID = component.MustNewIDWithName(typ.String(), name)
		set.TelemetrySettings = tel.NewTelemetrySettings()
		tr, err := NewFactory().CreateTraces(context.Background(), set, cfg)
		require.NoError(t, err)
		require.NoError(t, tr.Start(context.Background(), componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, tr.Shutdown(context.Background())) })
		if name == "full" {
			require.NoError(t, tr.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
		}
	}
	start("full")
	start("empty")

	m, err := tel.GetMetric("otelcol_sandboxaudit_exporter_spool_size")
	require.NoError(t, err)
	require.Positive(t, sumPoints(m, "", ""), "the full spool is not hidden by the empty one")
	require.Positive(t, sumPoints(m, "exporter", "sandboxaudit/full"))
	require.Zero(t, sumPoints(m, "exporter", "sandboxaudit/empty"))
}
