package sandboxauditencoding

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sandboxaudit/sandboxaudit/encoding/internal/metadata"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/metadatatest"
)

// TestMetadataMatchesCode records every metric through the extension's own
// methods and checks the result against metadata.yaml both ways (name, unit,
// description, kind, attributes and their enums), plus the TelemetryBuilder
// field names and the status. A new metric or reason needs a line here; the
// failures say what to add to metadata.yaml.
func TestMetadataMatchesCode(t *testing.T) {
	md := metadatatest.MustLoad(t, "metadata.yaml")
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	ext := newExt(t, &Config{}, tel)
	ctx := context.Background()

	_, err := ext.MarshalTraces(sandboxTraces(1, 2)) // marshaled, and the root span skipped
	require.NoError(t, err)
	_, err = ext.UnmarshalLogs([]byte(goodStart + "\n" + goodFinish + "\n"))
	require.NoError(t, err)
	_, err = ext.UnmarshalLogs([]byte(strings.Replace(goodStart, `"op":"exec"`, `"op":"nope"`, 1) + "\n"))
	require.Error(t, err) // rejected
	for _, r := range []string{reasonNotSandboxSpan, reasonInvalidSpan, reasonNotAuditEvent, reasonInvalidEvent} {
		ext.telemetry.skipped(ctx, r, 1)
	}
	require.EqualValues(t, 1, ext.telemetry.seqSessionsEvicted(ctx, 1))
	var every redact.Counts
	for k := range every {
		every[k] = 1
	}
	ext.telemetry.redacted(ctx, &every)

	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.Reader.Collect(ctx, &rm))
	metadatatest.CheckTelemetry(t, md, rm, metadata.ScopeName)
	metadatatest.CheckFields(t, md, ext.telemetry.tb)
	metadatatest.CheckStatus(t, md, metadata.Type.String(), metadatatest.Stability(map[string]component.StabilityLevel{
		"extension": NewFactory().Stability(),
	}))
}

// TestDocumentationMatchesMetadata keeps documentation.md, written by hand
// in mdatagen's shape, in step with metadata.yaml.
func TestDocumentationMatchesMetadata(t *testing.T) {
	md := metadatatest.MustLoad(t, "metadata.yaml")
	metadatatest.CheckDocumentation(t, md, "documentation.md")
}
