package sandboxauditexporter

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// spoolConfig is an HTTP sink to rec with its spool at path.
func spoolConfig(rec *recorder, path string) *Config {
	cfg := syncConfig()
	hc := withHTTP(cfg, rec.srv.URL, "ndjson", auditevent.PolicyOverride{})
	hc.Spool.GetOrInsertDefault().Path = path
	return cfg
}

// startAnother starts a second exporter (its own component) on cfg,
// validated before, as the collector validates every config before it
// starts any, and returns Start's error, the exporter shut down.
func startAnother(t *testing.T, cfg *Config) error {
	t.Helper()
	exp, err := NewFactory().CreateTraces(context.Background(), exportertest.NewNopSettings(typ), cfg)
	require.NoError(t, err)
	err = exp.Start(context.Background(), componenttest.NewNopHost())
	require.NoError(t, exp.Shutdown(context.Background()))
	return err
}

// An exporter whose file is another exporter's spool fails at start,
// naming the key, instead of refusing every write later.
func TestAFileAtAnotherExportersSpoolFailsAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	require.NoError(t, confmap.Validate(cfg))
	startIntegrityExporters(t, spoolConfig(newRecorder(t, nil), path))

	err := startAnother(t, cfg)
	require.ErrorContains(t, err, "file::path: "+path)
	require.ErrorContains(t, err, "spool")
}

// A spool at another exporter's sealed audit file fails at start, naming
// the key: it would take the audit lines for its own and trim them.
func TestASpoolAtAnotherExportersAuditFileFailsAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := sealedFileConfig(t, path)
	audit := startIntegrityExporters(t, cfg)
	require.NoError(t, audit.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	spooled := spoolConfig(newRecorder(t, nil), path)
	require.NoError(t, confmap.Validate(spooled))
	err = startAnother(t, spooled)
	require.ErrorContains(t, err, "http::spool::path: "+path)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after))
	require.NoFileExists(t, path+".offset")
}

// Within one exporter, a spool reached through a symbolic link to the
// file's directory (made only when the spool opens) is the file itself:
// the start fails, naming the key.
func TestASpoolThatIsTheFileThroughALinkFailsAtStart(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")))
	rec := newRecorder(t, nil)
	cfg := spoolConfig(rec, filepath.Join(dir, "real", "events.jsonl"))
	withFile(cfg, filepath.Join(dir, "link", "events.jsonl"), auditevent.PolicyOverride{})
	require.NoError(t, confmap.Validate(cfg))
	err := startAnother(t, cfg)
	require.ErrorContains(t, err, "file::path: "+filepath.Join(dir, "link", "events.jsonl"))
}

// A file with integrity at another exporter's open spool is refused before
// its sealer starts: nothing is signed or left beside the spool, so the
// spool's exporter starts again once the file is named elsewhere.
func TestAFileWithIntegrityAtAnotherExportersSpoolLeavesTheSpoolAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	cfg := sealedFileConfig(t, path)
	require.NoError(t, confmap.Validate(cfg))
	spooled := spoolConfig(newRecorder(t, nil), path)
	running := startIntegrityExporters(t, spooled)

	err := startAnother(t, cfg)
	require.ErrorContains(t, err, "file::path: "+path)
	for _, sidecar := range []string{integrity.OwnerLockPath(path), integrity.StorePath(path), integrity.CheckpointsPath(path)} {
		require.NoFileExists(t, sidecar)
	}
	running.shutdown(t)
	require.NoError(t, startAnother(t, spooled), "the spool's exporter, restarted")
}

// The owner lock stays on disk after a collector whose file exporter
// sealed nothing stopped (its start failed, say, because a spool at the
// same path was refused), or once the log's other sidecars are moved
// away. Alone, with no signed log beside it and no sealer holding it, it
// does not make the path an audit file: a spool configured there
// afterwards starts. While a sealer holds it, or while the log has
// sidecars (the new log's first checkpoint, signed at start), the spool
// is still refused.
func TestASpoolBesideALeftOwnerLockStarts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	held := startIntegrityExporters(t, sealedFileConfig(t, path))
	require.FileExists(t, integrity.OwnerLockPath(path))
	spooled := spoolConfig(newRecorder(t, nil), path)
	require.NoError(t, confmap.Validate(spooled))
	require.ErrorContains(t, startAnother(t, spooled), "http::spool::path: "+path, "a sealer holds the lock")
	held.shutdown(t)
	require.ErrorContains(t, startAnother(t, spooled), "http::spool::path: "+path, "the log has sidecars")

	for _, sidecar := range []string{integrity.StorePath(path), integrity.CheckpointsPath(path)} {
		require.NoError(t, os.Remove(sidecar))
	}
	require.FileExists(t, integrity.OwnerLockPath(path))
	require.NoError(t, startAnother(t, spooled))
}
