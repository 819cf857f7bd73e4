package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCollector runs the built collector with args to its end and returns
// its exit code and output.
func runCollector(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.collector, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	require.NoError(t, err, "%s", out)
	return 0, string(out)
}

// TestReadOnlyAuditDirFailsAtStart: an audit directory on a read-only
// mount (which root cannot write either) stops the collector at start,
// exit 1, naming file::path, instead of a collector that says it is ready
// and refuses every batch. Needs root to mount the tmpfs; skipped
// otherwise.
func TestReadOnlyAuditDirFailsAtStart(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	mnt := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(mnt, 0o700))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	code, out := runCollector(t, dir, "--set", "service::telemetry::metrics::level=none",
		"--set", "receivers::sandboxaudit::endpoint="+freeAddr(t),
		"--set", "receivers::otlp::protocols::grpc::endpoint="+freeAddr(t),
		"--set", "receivers::otlp::protocols::http::endpoint="+freeAddr(t),
		"--set", "exporters::sandboxaudit::file::path="+filepath.Join(mnt, "audit", "events.jsonl"))
	assert.Equal(t, 1, code, "%s", out)
	assert.Equal(t, 1, strings.Count(out, "Error: cannot start pipelines: failed to start \"sandboxaudit\" exporter: file::path: "+mnt+": read-only file system"), "%s", out)
	assert.NotContains(t, out, "audit lines to", "the collector never said it was ready")
}

// TestUnknownKeyIsNamedByItsPathByTheBinary: a misspelt key reaches the
// operator as its path, a list element's included, with no Go type name,
// and the collector exits 1.
func TestUnknownKeyIsNamedByItsPathByTheBinary(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "typo.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`receivers:
  sandboxaudit: {endpoint: `+freeAddr(t)+`, max_pendng: 5}
exporters:
  sandboxaudit:
    file:
      path: ./events.jsonl
      fsnyc: batch
      integrity: {signing_key_file: ./k, witnesses: [{endpoint: "https://w.example/", publickey: k}]}
service:
  pipelines:
    logs: {receivers: [sandboxaudit], exporters: [sandboxaudit]}
`), 0o600))
	code, out := runCollector(t, dir, "validate", "--config", cfg)
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, "max_pendng: unknown key")
	assert.Contains(t, out, "file::fsnyc: unknown key\nfile::integrity::witnesses::0::publickey: unknown key")
	assert.NotContains(t, out, "sandboxauditreceiver.")
	assert.NotContains(t, out, "sandboxauditexporter.")
}
