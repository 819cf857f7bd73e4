package kafkaguardreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/receiver/xreceiver"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/metadatatest"
	"github.com/sandboxaudit/sandboxaudit/kafkaguardreceiver/internal/metadata"
)

// TestMetadataMatchesCode: metadata.yaml's type and stability are the
// factory's, and the factory's are the contrib receiver's, so the guarded
// receiver can take the contrib one's place in a build. It has no
// telemetry of its own.
func TestMetadataMatchesCode(t *testing.T) {
	md := metadatatest.MustLoad(t, "metadata.yaml")
	require.Empty(t, md.Telemetry.Metrics)
	f := NewFactory().(xreceiver.Factory)
	stability := map[string]component.StabilityLevel{
		"traces":   f.TracesStability(),
		"logs":     f.LogsStability(),
		"metrics":  f.MetricsStability(),
		"profiles": f.ProfilesStability(),
	}
	metadatatest.CheckStatus(t, md, metadata.Type.String(), metadatatest.Stability(stability))

	contrib := kafkareceiver.NewFactory().(xreceiver.Factory)
	assert.Equal(t, contrib.Type(), f.Type())
	assert.Equal(t, map[string]component.StabilityLevel{
		"traces":   contrib.TracesStability(),
		"logs":     contrib.LogsStability(),
		"metrics":  contrib.MetricsStability(),
		"profiles": contrib.ProfilesStability(),
	}, stability)
}
