package sandboxauditreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// TestHugeDedupeWindowIsRefused: the window's table is allocated whole
// when the receiver is made (`validate` included), so a window of two
// billion ids would take the process down with a runtime out-of-memory
// crash; it is refused naming the key instead. The largest window taken
// is still accepted.
func TestHugeDedupeWindowIsRefused(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Dedupe.Window = 2_000_000_000
	err := confmap.Validate(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dedupe::window: must be at most 10000000")

	cfg.Dedupe.Window = maxDedupeWindow
	require.NoError(t, confmap.Validate(cfg))
	cfg.Dedupe.Enabled = false
	cfg.Dedupe.Window = 2_000_000_000
	require.NoError(t, confmap.Validate(cfg), "the window is not made when dedupe is off")
}
