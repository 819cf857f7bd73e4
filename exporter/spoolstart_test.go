package sandboxauditexporter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

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
// PEM fails the start naming its key, or http::tls.
func TestTLSFileThatCannotLoadNamesTheKey(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	for ca, want := range map[string]string{filepath.Join(t.TempDir(), "missing.pem"): "http::tls::ca_file: ", notPEM: "http::tls: "} {
		cfg := syncConfig()
		hc := withHTTP(cfg, "https://127.0.0.1:9/v1/sandbox/events", "ndjson", auditevent.PolicyOverride{})
		hc.ClientConfig.TLS.CAFile = ca
		require.NoError(t, cfg.Validate())
		lg, err := NewFactory().CreateLogs(context.Background(), exportertestSettings(), cfg)
		require.NoError(t, err)
		err = lg.Start(context.Background(), nopHost())
		require.ErrorContains(t, err, want)
		require.NoError(t, lg.Shutdown(context.Background()))
	}
}

// TestTLSFileThatCannotBeReadNamesItsKey: a TLS file that cannot be read
// is refused naming its own key (http::tls::cert_file, a witness's
// tls::ca_file) and its path once, as the receiver does; the TLS loader
// named only the section, and its path twice.
func TestTLSFileThatCannotBeReadNamesItsKey(t *testing.T) {
	keyPath, _ := writeKeys(t)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for want, setTLS := range map[string]func(*Config){
		"http::tls::cert_file: ": func(cfg *Config) {
			tls := &cfg.HTTP.Get().ClientConfig.TLS
			tls.CertFile, tls.KeyFile = missing, keyPath
		},
		"witnesses::0::tls::ca_file: ": func(cfg *Config) {
			ic := withIntegrity(cfg, keyPath)
			w := WitnessConfig{PublicKey: "unused"}
			w.ClientConfig.Endpoint = "https://127.0.0.1:9/w"
			w.ClientConfig.TLS.CAFile = missing
			ic.Witnesses = append(ic.Witnesses, w)
		},
	} {
		cfg := syncConfig()
		withFile(cfg, filepath.Join(t.TempDir(), "events.jsonl"), auditevent.PolicyOverride{})
		withHTTP(cfg, "https://127.0.0.1:9/v1/sandbox/events", "ndjson", auditevent.PolicyOverride{})
		setTLS(cfg)
		lg, err := NewFactory().CreateLogs(context.Background(), exportertestSettings(), cfg)
		require.NoError(t, err)
		err = lg.Start(context.Background(), nopHost())
		require.ErrorContains(t, err, want)
		require.ErrorIs(t, err, os.ErrNotExist)
		require.Equal(t, 1, strings.Count(err.Error(), missing), err.Error())
		require.NoError(t, lg.Shutdown(context.Background()))
	}
}

// TestTLSFileThatCannotLoadLeavesNothingOnDisk: a start refused for a TLS
// file (the HTTP sink's or a witness's) makes no directory, lock or spool:
// the TLS files load before the sinks open. It made the sealed file's
// directories and its sealer lock.
func TestTLSFileThatCannotLoadLeavesNothingOnDisk(t *testing.T) {
	keyPath, _ := writeKeys(t)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for name, setTLS := range map[string]func(*Config){
		"http": func(cfg *Config) { cfg.HTTP.Get().ClientConfig.TLS.CAFile = missing },
		"witness": func(cfg *Config) {
			ic := cfg.File.Get().Integrity.Get()
			w := WitnessConfig{PublicKey: "unused"}
			w.ClientConfig.Endpoint = "https://127.0.0.1:9/w"
			w.ClientConfig.TLS.CAFile = missing
			ic.Witnesses = append(ic.Witnesses, w)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := syncConfig()
			withFile(cfg, filepath.Join(dir, "audit", "events.jsonl"), auditevent.PolicyOverride{})
			withIntegrity(cfg, keyPath)
			hc := withHTTP(cfg, "https://127.0.0.1:9/v1/sandbox/events", "ndjson", auditevent.PolicyOverride{})
			hc.Spool.GetOrInsertDefault().Path = filepath.Join(dir, "spool", "spool.jsonl")
			setTLS(cfg)
			lg, err := NewFactory().CreateLogs(context.Background(), exportertestSettings(), cfg)
			require.NoError(t, err)
			err = lg.Start(context.Background(), nopHost())
			require.ErrorContains(t, err, "tls::ca_file: ")
			require.NoError(t, lg.Shutdown(context.Background()))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Empty(t, entries, "a refused start left files behind")
		})
	}
}

// TestQueueStorageNotRunningLeavesNothingOnDisk: a sending_queue whose
// storage extension does not run refuses the start naming the key, before
// a sink opens. exporterhelper looks for it only after the exporter's own
// start, which had made the audit directory and the spool.
func TestQueueStorageNotRunningLeavesNothingOnDisk(t *testing.T) {
	dir := t.TempDir()
	cfg := syncConfig()
	withFile(cfg, filepath.Join(dir, "audit", "events.jsonl"), auditevent.PolicyOverride{})
	hc := withHTTP(cfg, "http://127.0.0.1:9/v1/sandbox/events", "ndjson", auditevent.PolicyOverride{})
	hc.Spool.GetOrInsertDefault().Path = filepath.Join(dir, "spool", "spool.jsonl")
	storage := component.MustNewID("file_storage")
	cfg.QueueConfig.GetOrInsertDefault().StorageID = &storage
	require.NoError(t, cfg.Validate())
	lg, err := NewFactory().CreateLogs(context.Background(), exportertestSettings(), cfg)
	require.NoError(t, err)
	err = lg.Start(context.Background(), nopHost())
	require.ErrorContains(t, err, "sending_queue::storage: ")
	require.ErrorContains(t, err, "file_storage")
	require.NoError(t, lg.Shutdown(context.Background()))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "a refused start left files behind")
}

// TestSpoolThatIsASymlinkIsRefusedByValidate: the spool never opens a
// symbolic link in its place, so validate refuses one as start would.
func TestSpoolThatIsASymlinkIsRefusedByValidate(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.jsonl")
	require.NoError(t, os.WriteFile(target, nil, 0o600))
	link := filepath.Join(dir, "spool.jsonl")
	require.NoError(t, os.Symlink(target, link))
	sc := SpoolConfig{Path: link, ReplayInterval: time.Second}
	require.ErrorContains(t, sc.Validate(), "path: "+link+" is a symbolic link")
	sc.Path = target
	require.NoError(t, sc.Validate())
}

// TestInsecureTLSFilesAreNotRead: with tls::insecure and no CA the TLS
// loader reads no file, so a cert_file and key_file left in the
// configuration (a template's, for another environment) do not stop the
// start.
func TestInsecureTLSFilesAreNotRead(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.pem")
	cfg := syncConfig()
	hc := withHTTP(cfg, "http://127.0.0.1:9/v1/sandbox/events", "ndjson", auditevent.PolicyOverride{})
	hc.ClientConfig.TLS.Insecure = true
	hc.ClientConfig.TLS.CertFile, hc.ClientConfig.TLS.KeyFile = missing, missing
	require.NoError(t, confmap.Validate(cfg))
	lg, err := NewFactory().CreateLogs(context.Background(), exportertestSettings(), cfg)
	require.NoError(t, err)
	require.NoError(t, lg.Start(context.Background(), nopHost()))
	require.NoError(t, lg.Shutdown(context.Background()))
}
