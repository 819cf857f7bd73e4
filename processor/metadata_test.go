package sandboxauditprocessor

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/metadatatest"
	"github.com/sandboxaudit/sandboxaudit/processor/internal/metadata"
)

// TestMetadataMatchesCode: metadata.yaml's type and stability are the
// factory's. The processor has no telemetry of its own, so its
// documentation.md is prose (mdatagen would write none) and is not
// compared.
func TestMetadataMatchesCode(t *testing.T) {
	md := metadatatest.MustLoad(t, "metadata.yaml")
	require.Empty(t, md.Telemetry.Metrics)
	metadatatest.CheckStatus(t, md, metadata.Type.String(), metadatatest.Stability(map[string]component.StabilityLevel{
		"traces": NewFactory().TracesStability(),
	}))
}
