package sandboxauditexporter

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestEveryFullDiskFailureIsCounted: 72 pushes to a file on a device that
// answers every write with ENOSPC (/dev/full) each fail, and
// events_dropped{reason="file_error"} counts every event of every push,
// whatever a sampled log shows (the collector's logger keeps the first 10
// lines of a kind per second and then one in 100).
func TestEveryFullDiskFailureIsCounted(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	cfg := syncConfig()
	withFile(cfg, "/dev/full", auditevent.PolicyOverride{})
	cfg.File.Get().Fsync = "never"
	te := startExporters(t, cfg)

	const pushes = 72
	for i := range pushes {
		err := te.logs.ConsumeLogs(context.Background(), buildAuditLogs())
		require.ErrorIs(t, err, syscall.ENOSPC, "push %d", i)
	}
	assert.Equal(t, int64(2*pushes), te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "reason", "file_error"))
	assert.Zero(t, te.counter(t, "otelcol_sandboxaudit_exporter_events_written", "sink", "file"))
}
