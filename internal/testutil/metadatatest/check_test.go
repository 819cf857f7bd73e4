package metadatatest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// recorder collects the errors a check reports instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Helper() {}

const testYAML = `
type: demo
status:
  class: exporter
  stability:
    alpha: [traces, logs]
attributes:
  sink:
    description: Which sink.
    type: string
    enum: [file, http]
telemetry:
  metrics:
    demo_events_written:
      enabled: true
      stability: alpha
      description: Events written.
      unit: "{event}"
      attributes: [sink]
      sum:
        value_type: int
        monotonic: true
`

func load(t *testing.T) Metadata {
	t.Helper()
	p := filepath.Join(t.TempDir(), "metadata.yaml")
	require.NoError(t, os.WriteFile(p, []byte(testYAML), 0o600))
	md, err := Load(p)
	require.NoError(t, err)
	return md
}

// collect records through a fresh meter and returns what a reader sees.
func collect(t *testing.T, record func(metric.Meter)) metricdata.ResourceMetrics {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	record(mp.Meter("demo"))
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	return rm
}

func counter(t *testing.T, m metric.Meter, name, desc, unit string) metric.Int64Counter {
	c, err := m.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit(unit))
	require.NoError(t, err)
	return c
}

func TestCheckTelemetryAcceptsAMatch(t *testing.T) {
	md := load(t)
	rm := collect(t, func(m metric.Meter) {
		counter(t, m, "otelcol_demo_events_written", "Events written. [Alpha]", "{event}").
			Add(context.Background(), 1, metric.WithAttributes(attribute.String("sink", "file")))
	})
	r := &recorder{TB: t}
	CheckTelemetry(r, md, rm, "demo")
	assert.Empty(t, r.errs)
}

func TestCheckTelemetryNamesWhatToAdd(t *testing.T) {
	md := load(t)
	rm := collect(t, func(m metric.Meter) {
		ctx := context.Background()
		counter(t, m, "otelcol_demo_events_written", "Events written.", "1").
			Add(ctx, 1, metric.WithAttributes(attribute.String("sink", "kafka"), attribute.String("reason", "x")))
		counter(t, m, "otelcol_demo_events_lost", "Events lost.", "{event}").Add(ctx, 1)
	})
	r := &recorder{TB: t}
	CheckTelemetry(r, md, rm, "demo")
	all := strings.Join(r.errs, "\n")
	assert.Contains(t, all, `code registers unit "1", metadata.yaml says "{event}"`)
	assert.Contains(t, all, `metadata.yaml gives "Events written. [Alpha]"`)
	assert.Contains(t, all, `add "kafka" to the enum`)
	assert.Contains(t, all, `recorded with attribute "reason"`)
	assert.Contains(t, all, "add telemetry.metrics.demo_events_lost")

	// Nothing recorded: the declared metric is missing.
	r = &recorder{TB: t}
	CheckTelemetry(r, md, collect(t, func(metric.Meter) {}), "demo")
	require.Len(t, r.errs, 1)
	assert.Contains(t, r.errs[0], "declares telemetry.metrics.demo_events_written but no otelcol_demo_events_written was recorded")
	assert.Contains(t, r.errs[0], "field DemoEventsWritten")
}

func TestCheckFields(t *testing.T) {
	md := load(t)
	type good struct {
		_                 struct{} // unexported fields are not metrics
		DemoEventsWritten metric.Int64Counter
	}
	r := &recorder{TB: t}
	CheckFields(r, md, &good{})
	assert.Empty(t, r.errs)

	type bad struct {
		DemoEventsWrittenTotal metric.Int64Counter
	}
	r = &recorder{TB: t}
	CheckFields(r, md, &bad{})
	all := strings.Join(r.errs, "\n")
	assert.Contains(t, all, "no field DemoEventsWritten")
	assert.Contains(t, all, "field DemoEventsWrittenTotal matches no metric")
}

func TestCheckStatus(t *testing.T) {
	md := load(t)
	r := &recorder{TB: t}
	CheckStatus(r, md, "demo", map[string]string{"traces": "alpha", "logs": "alpha"})
	assert.Empty(t, r.errs)
	CheckStatus(r, md, "other", map[string]string{"traces": "beta"})
	all := strings.Join(r.errs, "\n")
	assert.Contains(t, all, `metadata.Type is "other"`)
	assert.Contains(t, all, `traces stability "beta"`)
	assert.Contains(t, all, "signal logs (alpha) that the factory does not create")
}

func TestFieldName(t *testing.T) {
	assert.Equal(t, "SandboxauditExporterEventsWritten", FieldName("sandboxaudit_exporter_events_written"))
	assert.Equal(t, "ReceiverAcceptedSpans", FieldName("receiver_accepted_spans"))
}

func TestCheckDocumentation(t *testing.T) {
	md := load(t)
	doc := Documentation(md)
	assert.Contains(t, doc, "### otelcol_demo_events_written\n\nEvents written.\n")
	assert.Contains(t, doc, "| sink | Which sink. | file, http | - |")

	p := filepath.Join(t.TempDir(), "documentation.md")
	require.NoError(t, os.WriteFile(p, []byte(doc), 0o600))
	r := &recorder{TB: t}
	CheckDocumentation(r, md, p)
	assert.Empty(t, r.errs)

	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(doc, "Events written.", "Events.", 1)), 0o600))
	CheckDocumentation(r, md, p)
	require.Len(t, r.errs, 1)
	assert.Contains(t, r.errs[0], "out of step with metadata.yaml")
}
