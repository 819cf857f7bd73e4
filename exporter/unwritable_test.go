package sandboxauditexporter

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// startError starts a logs exporter on cfg and returns Start's error,
// shutting it down either way.
func startError(t *testing.T, cfg *Config) error {
	t.Helper()
	require.NoError(t, cfg.Validate())
	ctx := context.Background()
	lg, err := NewFactory().CreateLogs(ctx, exportertestSettings(), cfg)
	require.NoError(t, err)
	err = lg.Start(ctx, componenttest.NewNopHost())
	require.NoError(t, lg.Shutdown(ctx))
	return err
}

// TestAuditPathNoFileCanBeMadeAtIsRefusedAtStart: a file.path no file can be
// created at (a directory on the way is a regular file, or a directory
// this process may not write) fails at start naming the key, rather than
// saying the collector is ready and refusing every batch.
func TestAuditPathNoFileCanBeMadeAtIsRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(notDir, nil, 0o600))
	for _, path := range []string{
		filepath.Join(notDir, "events.jsonl"),
		filepath.Join(notDir, "deeper", "events.jsonl"),
		filepath.Join(notDir, "{session_id}.jsonl"),
	} {
		cfg := syncConfig()
		withFile(cfg, path, auditevent.PolicyOverride{})
		err := startError(t, cfg)
		require.Error(t, err, path)
		assert.Contains(t, err.Error(), "file::path: ")
		assert.Contains(t, err.Error(), notDir+" is not a directory")
		assert.NotContains(t, err.Error(), "sandboxaudit exporter", "the collector names the component")
	}
	if os.Geteuid() == 0 {
		t.Log("running as root, which may write any directory: the read-only directory case is not tried")
		return
	}
	ro := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(ro, 0o500))
	cfg := syncConfig()
	withFile(cfg, filepath.Join(ro, "audit", "events.jsonl"), auditevent.PolicyOverride{})
	err := startError(t, cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "file::path: ")
	assert.Contains(t, err.Error(), ro)
}

// TestAuditPathInAWritableDirectoryStarts: a missing directory below a
// writable one, and an existing writable file, start as before; nothing is
// created until the first event.
func TestAuditPathInAWritableDirectoryStarts(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "events.jsonl")
	require.NoError(t, os.WriteFile(existing, nil, 0o600))
	for _, path := range []string{existing, filepath.Join(dir, "a", "b", "events.jsonl"), filepath.Join(dir, "s", "{session_id}.jsonl")} {
		cfg := syncConfig()
		withFile(cfg, path, auditevent.PolicyOverride{})
		require.NoError(t, startError(t, cfg), path)
	}
	_, err := os.Lstat(filepath.Join(dir, "a"))
	assert.True(t, os.IsNotExist(err), "the directory is made with the first event")
}

// TestRotationInADirectoryNoSegmentCanBeMadeInIsRefusedAtStart: with
// rotation on, the sink makes segments beside the file, so a writable
// file in a directory this user may not write fails at start; without
// rotation the file alone is appended to and starts.
func TestRotationInADirectoryNoSegmentCanBeMadeInIsRefusedAtStart(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which may write any directory")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(dir, 0o700))
	path := filepath.Join(dir, "events.jsonl")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	require.NoError(t, os.Chmod(dir, 0o500))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })

	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	require.NoError(t, startError(t, cfg), "no rotation: the file alone is written")

	cfg = syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	rc := cfg.File.Get().Rotation.GetOrInsertDefault()
	rc.MaxMegabytes = 1
	err := startError(t, cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "file::path: "+dir+": permission denied")
}
