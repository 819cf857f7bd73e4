package sandboxaudit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/component"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/metadatatest"
)

// TestRootMetadata keeps the module root's metadata.yaml in step with the
// components it bundles: the type is the receiver's and the exporter's, and
// each signal's stability is what both factories report.
func TestRootMetadata(t *testing.T) {
	md := metadatatest.MustLoad(t, "metadata.yaml")
	assert.Equal(t, "pkg", md.Status.Class)
	rf, ef := ReceiverFactory(), ExporterFactory()
	for _, typ := range []string{rf.Type().String(), ef.Type().String()} {
		assert.Equal(t, md.Type, typ)
	}
	stability := metadatatest.Stability(map[string]component.StabilityLevel{
		"traces": rf.TracesStability(),
		"logs":   rf.LogsStability(),
	})
	assert.Equal(t, stability, metadatatest.Stability(map[string]component.StabilityLevel{
		"traces": ef.TracesStability(),
		"logs":   ef.LogsStability(),
	}), "receiver and exporter stability differ; the root metadata.yaml cannot state both")
	metadatatest.CheckStatus(t, md, md.Type, stability)
}
