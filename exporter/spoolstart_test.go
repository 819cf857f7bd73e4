package sandboxauditexporter

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestSpoolThatCannotOpenNamesTheKey: a spool that cannot be opened at
// start (its directory is a file; another exporter holds it) fails the
// start naming the configuration key, not only the path.
func TestSpoolThatCannotOpenNamesTheKey(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "not-a-dir")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	shared := filepath.Join(dir, "spool.jsonl")

	start := func(spoolPath string) (func(), error) {
		cfg := syncConfig()
		hc := withHTTP(cfg, "http://127.0.0.1:9/v1/sandbox/events", "ndjson", auditevent.PolicyOverride{})
		hc.Spool.GetOrInsertDefault().Path = spoolPath
		require.NoError(t, cfg.Validate())
		lg, err := NewFactory().CreateLogs(context.Background(), exportertestSettings(), cfg)
		require.NoError(t, err)
		err = lg.Start(context.Background(), nopHost())
		return func() { require.NoError(t, lg.Shutdown(context.Background())) }, err
	}

	stop, err := start(filepath.Join(blocker, "spool.jsonl"))
	require.ErrorContains(t, err, "http::spool::path: ")
	stop()

	stopFirst, err := start(shared)
	require.NoError(t, err)
	defer stopFirst()
	stop, err = start(shared)
	require.ErrorContains(t, err, "http::spool::path: ")
	require.ErrorContains(t, err, "in use")
	stop()
}

// TestTLSFileThatCannotLoadNamesTheKey: a TLS file that is missing or not
// PEM fails the start naming http::tls.
func TestTLSFileThatCannotLoadNamesTheKey(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	for _, ca := range []string{filepath.Join(t.TempDir(), "missing.pem"), notPEM} {
		cfg := syncConfig()
		hc := withHTTP(cfg, "https://127.0.0.1:9/v1/sandbox/events", "ndjson", auditevent.PolicyOverride{})
		hc.ClientConfig.TLS.CAFile = ca
		require.NoError(t, cfg.Validate())
		lg, err := NewFactory().CreateLogs(context.Background(), exportertestSettings(), cfg)
		require.NoError(t, err)
		err = lg.Start(context.Background(), nopHost())
		require.ErrorContains(t, err, "http::tls: ")
		require.NoError(t, lg.Shutdown(context.Background()))
	}
}
