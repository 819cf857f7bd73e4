package sandboxaudit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/metadatatest"
)

// TestRootMetadata keeps the module root's metadata.yaml in step with the
// components it bundles: the type is the receiver's and the exporter's, and
// each signal's stability is what both factories report.
func TestRootMetadata(t *testing.T) {
	md, err := metadatatest.Load("metadata.yaml")
	require.NoError(t, err)
	assert.Equal(t, "pkg", md.Status.Class)
	rf, ef := ReceiverFactory(), ExporterFactory()
	for _, typ := range []string{rf.Type().String(), ef.Type().String()} {
		assert.Equal(t, md.Type, typ)
	}
	stability := map[string]string{
		"traces": strings.ToLower(rf.TracesStability().String()),
		"logs":   strings.ToLower(rf.LogsStability().String()),
	}
	assert.Equal(t, stability, map[string]string{
		"traces": strings.ToLower(ef.TracesStability().String()),
		"logs":   strings.ToLower(ef.LogsStability().String()),
	}, "receiver and exporter stability differ; the root metadata.yaml cannot state both")
	metadatatest.CheckStatus(t, md, md.Type, stability)
}
