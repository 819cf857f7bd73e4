package sandboxauditexporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestTinyReplayIntervalIsRefused: the replayer looks at the spool every
// replay_interval even when it is empty, so 1ns kept a core busy (60 % of
// one) with nothing to send; an interval under 10ms is refused naming the
// key, and 10ms is taken.
func TestTinyReplayIntervalIsRefused(t *testing.T) {
	for interval, ok := range map[time.Duration]bool{time.Nanosecond: false, 9 * time.Millisecond: false, 10 * time.Millisecond: true} {
		cfg := syncConfig()
		hc := withHTTP(cfg, "http://127.0.0.1:1/v1/sandbox/events", "ndjson", auditevent.PolicyOverride{})
		sc := hc.Spool.GetOrInsertDefault()
		sc.Path = "./spool.jsonl"
		sc.ReplayInterval = interval
		err := confmap.Validate(cfg)
		if ok {
			require.NoError(t, err, interval)
			continue
		}
		require.Error(t, err, interval)
		assert.Contains(t, err.Error(), "replay_interval: must be at least 10ms, got "+interval.String())
	}
}
