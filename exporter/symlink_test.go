package sandboxauditexporter

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestSymlinkedSessionFileIsRefusedAndCounted: a symlink planted at a
// session's templated file (audit/<session>.jsonl -> a file elsewhere)
// makes the export fail with an error naming the file section once and the
// link (no Go package), counts the events as
// events_dropped{reason="file_symlink"}, and leaves the target as it was.
func TestSymlinkedSessionFileIsRefusedAndCounted(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(target, []byte("precious\n"), 0o600))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, sessionA+".jsonl")))
	cfg := syncConfig()
	withFile(cfg, filepath.Join(dir, "{session_id}.jsonl"), auditevent.PolicyOverride{})
	te := startExporters(t, cfg)

	err := te.logs.ConsumeLogs(context.Background(), buildAuditLogs())
	require.Error(t, err)
	link := filepath.Join(dir, sessionA+".jsonl")
	assert.EqualError(t, err, "file: session "+sessionA+": 2 events not written: open "+link+": symbolic link in the audit path (not followed)")
	assert.Equal(t, int64(2), te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "reason", "file_symlink"))
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(b))
}

// TestExistingLooseAuditFileIsWarnedAbout: the sink creates audit files
// 0600 and leaves an existing file's mode alone, so one others can read is
// named in a warning at start; a 0600 file is not.
func TestExistingLooseAuditFileIsWarnedAbout(t *testing.T) {
	for mode, warned := range map[os.FileMode]int{0o644: 1, 0o600: 0} {
		path := filepath.Join(t.TempDir(), "events.jsonl")
		require.NoError(t, os.WriteFile(path, nil, 0o600))
		require.NoError(t, os.Chmod(path, mode))
		cfg := syncConfig()
		withFile(cfg, path, auditevent.PolicyOverride{})
		core, logs := observer.New(zapcore.WarnLevel)
		startExportersWithLogger(t, cfg, zap.New(core))
		assert.Equal(t, warned, logs.FilterField(zap.String("path", path)).FilterMessageSnippet("other than its owner").Len(), "mode %o", mode)
	}
}
