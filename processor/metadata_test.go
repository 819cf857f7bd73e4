package sandboxauditprocessor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/metadatatest"
	"github.com/sandboxaudit/sandboxaudit/processor/internal/metadata"
)

// TestMetadataMatchesCode: metadata.yaml's type and stability are the
// factory's. The processor has no telemetry of its own, so its
// documentation.md is prose (mdatagen would write none) and is not
// compared.
func TestMetadataMatchesCode(t *testing.T) {
	md, err := metadatatest.Load("metadata.yaml")
	require.NoError(t, err)
	require.Empty(t, md.Telemetry.Metrics)
	metadatatest.CheckStatus(t, md, metadata.Type.String(), map[string]string{
		"traces": strings.ToLower(NewFactory().TracesStability().String()),
	})
}
