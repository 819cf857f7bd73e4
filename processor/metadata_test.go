package sandboxauditprocessor

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/metadatatest"
	"github.com/sandboxaudit/sandboxaudit/processor/internal/metadata"
)

// TestMetadataMatchesCode records the processor's metric through the
// processor, with a span holding a secret of every built-in kind and one
// for each user pattern and key, and checks the result against
// metadata.yaml both ways (name, unit, description, kind, attribute enum),
// plus the TelemetryBuilder field names and the status.
func TestMetadataMatchesCode(t *testing.T) {
	md := metadatatest.MustLoad(t, "metadata.yaml")
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	tb, err := metadata.NewTelemetryBuilder(tel.NewTelemetrySettings())
	require.NoError(t, err)
	p, err := newSpanPolicy(configWithUserRules(), tb)
	require.NoError(t, err)
	ctx := context.Background()

	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	putSandbox(span.Attributes(), "exec")
	span.Attributes().PutStr("sandbox.error.message", everyKindText())
	_, err = p.processTraces(ctx, td)
	require.NoError(t, err)

	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.Reader.Collect(ctx, &rm))
	metadatatest.CheckTelemetry(t, md, rm, metadata.ScopeName)
	metadatatest.CheckFields(t, md, tb)
	metadatatest.CheckStatus(t, md, metadata.Type.String(), metadatatest.Stability(map[string]component.StabilityLevel{
		"traces": NewFactory().TracesStability(),
		"logs":   NewFactory().LogsStability(),
	}))
}

// TestDocumentationMatchesMetadata keeps the telemetry section that ends
// documentation.md, written by hand in mdatagen's shape after the
// processor's own prose, in step with metadata.yaml.
func TestDocumentationMatchesMetadata(t *testing.T) {
	md := metadatatest.MustLoad(t, "metadata.yaml")
	want := metadatatest.Documentation(md)
	want = want[strings.Index(want, "## Internal Telemetry"):]
	got, err := os.ReadFile("documentation.md")
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(got), "\n"+want),
		"documentation.md must end with this text, from metadata.yaml:\n%s", want)
}
