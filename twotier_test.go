package sandboxaudit

import (
	"cmp"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	sandboxauditexporter "github.com/sandboxaudit/sandboxaudit/exporter"
	sandboxauditreceiver "github.com/sandboxaudit/sandboxaudit/receiver"
)

// TestCentralTakesTheEdgesLongestLine: a line the edge accepts must fit in
// one request to the central receiver, or the central answers 413 to it
// alone and the edge drops it. The receiver's default body limit (20 MiB)
// is below the exporter's default max_line_bytes (24 MiB), so the shipped
// central config raises it.
func TestCentralTakesTheEdgesLongestLine(t *testing.T) {
	edge, err := confmaptest.LoadConf(filepath.Join("testdata", "edge.yaml"))
	require.NoError(t, err)
	sub, err := edge.Sub("exporters::sandboxaudit")
	require.NoError(t, err)
	ecfg := sandboxauditexporter.NewFactory().CreateDefaultConfig().(*sandboxauditexporter.Config)
	require.NoError(t, sub.Unmarshal(ecfg))

	central, err := confmaptest.LoadConf(filepath.Join("testdata", "central.yaml"))
	require.NoError(t, err)
	sub, err = central.Sub("receivers::sandboxaudit")
	require.NoError(t, err)
	rcfg := sandboxauditreceiver.NewFactory().CreateDefaultConfig().(*sandboxauditreceiver.Config)
	require.NoError(t, sub.Unmarshal(rcfg))

	line := int64(ecfg.MaxLineBytes) + 1                         // and its newline
	body := cmp.Or(rcfg.ServerConfig.MaxRequestBodySize, 20<<20) // 0: confighttp's default
	assert.GreaterOrEqual(t, body, line,
		"central max_request_body_size below the edge's longest line (max_line_bytes %d)", ecfg.MaxLineBytes)
}
