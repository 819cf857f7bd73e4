package sandboxauditexporter

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

func writeKeys(t *testing.T) (keyPath, pubPath string) {
	t.Helper()
	k, p, err := integrity.GenerateKeyFiles(t.TempDir(), "exporter-test")
	require.NoError(t, err)
	return k, p
}

func withIntegrity(cfg *Config, keyPath string) *IntegrityConfig {
	ic := cfg.File.GetOrInsertDefault().Integrity.GetOrInsertDefault()
	ic.SigningKeyFile = keyPath
	ic.CheckpointInterval = time.Hour // only the shutdown checkpoint, unless a test says otherwise
	return ic
}

// sealedFileConfig is a file sink at path, sealed with a new key.
func sealedFileConfig(t *testing.T, path string) *Config {
	t.Helper()
	keyPath, _ := writeKeys(t)
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	withIntegrity(cfg, keyPath)
	return cfg
}

// checkFile runs the verifier's checker over path.
func checkFile(t *testing.T, path, pubPath string) integrity.CheckResult {
	t.Helper()
	v, err := integrity.LoadVerifierKey(pubPath)
	require.NoError(t, err)
	c, err := integrity.NewChecker(path, v)
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	_, err = io.Copy(c.Writer(), f)
	require.NoError(t, err)
	return c.Finish()
}

func TestIntegrityConfigErrorsNameTheKey(t *testing.T) {
	keyPath, _ := writeKeys(t)
	secret, err := os.ReadFile(keyPath)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(keyPath, 0o640))

	cm := confmap.NewFromStringMap(map[string]any{
		"file": map[string]any{
			"path":      filepath.Join(t.TempDir(), "a.jsonl"),
			"integrity": map[string]any{"signing_key_file": keyPath, "checkpoint_interval": "-1s"},
		},
	})
	cfg := createDefaultConfig()
	require.NoError(t, cm.Unmarshal(&cfg))
	err = confmap.Validate(cfg)
	require.ErrorContains(t, err, "file: integrity: signing_key_file: ")
	require.ErrorContains(t, err, "0640")
	require.ErrorContains(t, err, "checkpoint_interval: must be 0 (the default, 1s) or between 10ms and 24h0m0s, got -1s")
	require.NotContains(t, err.Error(), strings.TrimSpace(string(secret))[len("PRIVATE+KEY+"):])

	// Each error of a witness's client names its own key, not only the
	// first of a joined list.
	require.NoError(t, os.Chmod(keyPath, 0o600))
	cm = confmap.NewFromStringMap(map[string]any{"file": map[string]any{
		"path": filepath.Join(t.TempDir(), "a.jsonl"),
		"integrity": map[string]any{"signing_key_file": keyPath, "witnesses": []any{map[string]any{
			"endpoint": "http://127.0.0.1:1/cp", "proxy_url": "http://u:PROXYSECRET@[::1", "timeout": "-1s",
			"public_key": "w.example+00000000+BA==",
		}}},
	}})
	cfg = createDefaultConfig()
	require.NoError(t, cm.Unmarshal(&cfg))
	err = confmap.Validate(cfg)
	require.ErrorContains(t, err, "file: integrity: witnesses::0::proxy_url: not a valid absolute URL\nwitnesses::0::timeout: must be >= 0, got -1s")
	require.ErrorContains(t, err, "witnesses::0::public_key: not a witness cosignature key")
	require.NotContains(t, err.Error(), "PROXYSECRET")

	// Years, a slip of the unit: lines unsealed, cosignatures held back.
	cm = confmap.NewFromStringMap(map[string]any{"file": map[string]any{
		"path": filepath.Join(t.TempDir(), "a.jsonl"),
		"integrity": map[string]any{"signing_key_file": keyPath, "checkpoint_interval": "8760h", "witnesses": []any{map[string]any{
			"endpoint": "http://127.0.0.1:1/cp", "timeout": "8760h", "public_key": "w.example+00000000+BA==",
		}}},
	}})
	cfg = createDefaultConfig()
	require.NoError(t, cm.Unmarshal(&cfg))
	err = confmap.Validate(cfg)
	require.ErrorContains(t, err, "checkpoint_interval: must be 0 (the default, 1s) or between 10ms and 24h0m0s, got 8760h0m0s")
	require.ErrorContains(t, err, "witnesses::0::timeout: must be at most 5m0s, got 8760h0m0s")

	// A request ends with its witness round at the latest (checkpoint_interval
	// × 10 + 10s): a longer timeout would never be waited for.
	cm = confmap.NewFromStringMap(map[string]any{"file": map[string]any{
		"path": filepath.Join(t.TempDir(), "a.jsonl"),
		"integrity": map[string]any{"signing_key_file": keyPath, "witnesses": []any{map[string]any{
			"endpoint": "http://127.0.0.1:1/cp", "timeout": "30s", "public_key": "w.example+00000000+BA==",
		}}},
	}})
	cfg = createDefaultConfig()
	require.NoError(t, cm.Unmarshal(&cfg))
	require.ErrorContains(t, confmap.Validate(cfg),
		"witnesses::0::timeout: 30s is longer than a witness round may take (checkpoint_interval × 10 + 10s = 20s)")

	// Absent section: integrity is off.
	off := createDefaultConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"file": map[string]any{"path": "x.jsonl"}}).Unmarshal(&off))
	require.False(t, off.(*Config).File.Get().Integrity.HasValue())

	// A section written with nothing under it (its keys commented out) is
	// on, and refused for what it lacks, rather than integrity being off
	// without a word.
	for _, section := range []map[string]any{
		{"integrity": nil},
		{"integrity": map[string]any{"signing_key_file": keyPath, "witnesses": []any{map[string]any{}}}},
	} {
		section["path"] = "x.jsonl"
		empty := createDefaultConfig()
		require.NoError(t, confmap.NewFromStringMap(map[string]any{"file": section}).Unmarshal(&empty))
		require.True(t, empty.(*Config).File.Get().Integrity.HasValue())
		require.Error(t, confmap.Validate(empty), "%v", section)
	}
}

func TestIntegrityIntervalCheckpoints(t *testing.T) {
	keyPath, pubPath := writeKeys(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	withIntegrity(cfg, keyPath).CheckpointInterval = 20 * time.Millisecond
	te := startIntegrityExporters(t, cfg)
	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	// Wait (bounded) for the interval checkpoint, before shutdown.
	v, err := integrity.LoadVerifierKey(pubPath)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, c, err := integrity.NewestSigned(path, v)
		return err == nil && c.N > 0
	}, 10*time.Second, 10*time.Millisecond)
	te.shutdown(t)
	res := checkFile(t, path, pubPath)
	require.Nil(t, res.Failure)
	require.Equal(t, 2, res.Checkpoints, "the start's, of 0 lines, and the interval's; nothing new at shutdown")
}

func TestIntegrityRefusesTamperedFileAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := sealedFileConfig(t, path)
	te := startIntegrityExporters(t, cfg)
	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	te.shutdown(t)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), `"seq":1,`, `"seq":7,`, 1)), 0o600))

	err = startAnother(t, cfg)
	require.ErrorIs(t, err, integrity.ErrTampered)
	require.ErrorContains(t, err, "line 1 differs")
}

// integrityExporters is a started traces exporter shut down explicitly.
type integrityExporters struct {
	*testExporters
	done bool
}

func startIntegrityExporters(t *testing.T, cfg *Config) *integrityExporters {
	t.Helper()
	require.NoError(t, confmap.Validate(cfg))
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := exportertest.NewNopSettings(typ)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	tr, err := NewFactory().CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, tr.Start(context.Background(), componenttest.NewNopHost()))
	ie := &integrityExporters{testExporters: &testExporters{traces: tr, tel: tel}}
	t.Cleanup(func() {
		if !ie.done {
			require.NoError(t, tr.Shutdown(context.Background()))
		}
	})
	return ie
}

func (ie *integrityExporters) shutdown(t *testing.T) {
	t.Helper()
	require.NoError(t, ie.traces.Shutdown(context.Background()))
	ie.done = true
}

func (ie *integrityExporters) sum(t *testing.T, name string) int64 {
	t.Helper()
	m, err := ie.tel.GetMetric(name)
	require.NoError(t, err)
	return sumPoints(m, "", "")
}

// TestIntegrityTemplatedPath, for an absolute and a relative path (the
// examples in docs/examples.md are relative): one tree and one checkpoint chain per
// session file, each named by its session's directory; at the next start,
// lines another writer appended to a session file the collector no longer
// writes are sealed too.
func TestIntegrityTemplatedPath(t *testing.T) {
	for _, relative := range []bool{false, true} {
		t.Run(fmt.Sprintf("relative=%v", relative), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "{session_id}", "events.jsonl")
			if relative {
				t.Chdir(dir)
				path = filepath.Join("audit", "{session_id}", "events.jsonl")
				dir = filepath.Join(dir, "audit")
			}
			testIntegrityTemplatedPath(t, dir, path)
		})
	}
}

func testIntegrityTemplatedPath(t *testing.T, dir, path string) {
	keyPath, pubPath := writeKeys(t)
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	withIntegrity(cfg, keyPath)
	te := startIntegrityExporters(t, cfg)
	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	lag, err := te.tel.GetMetric("otelcol_sandboxaudit_exporter_seal_lag_lines")
	require.NoError(t, err)
	require.Positive(t, sumPoints(lag, "", ""), "lines written, none sealed before the interval")
	te.shutdown(t)

	files, err := filepath.Glob(filepath.Join(dir, "*", "events.jsonl"))
	require.NoError(t, err)
	require.Len(t, files, 2, "sample spans hold two sessions")
	for _, f := range files {
		res := checkFile(t, f, pubPath)
		require.Nil(t, res.Failure, f)
		require.Equal(t, int64(len(readLines(t, f))), res.Sealed, f)
		// Named with its session's directory: every file is events.jsonl.
		session := filepath.Base(filepath.Dir(f))
		require.True(t, strings.HasSuffix(res.Origin, "/"+session+"/events.jsonl"), "origin %q of %s", res.Origin, f)
	}

	// Another writer appends to the first session's file while the
	// collector is down; the next start seals it.
	extra := readLines(t, files[0])[0] + "\n"
	fh, err := os.OpenFile(files[0], os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = fh.WriteString(extra)
	require.NoError(t, err)
	require.NoError(t, fh.Close())
	// The second session's file is rotated with its sidecars, and a line
	// is appended to the rotated segment; a stray file with a store sits
	// below the base. Neither is a file the template gives: a start used
	// to seal both, signing the appended line and the stray file.
	for _, suffix := range []string{"", integrity.StoreSuffix, integrity.CheckpointsSuffix} {
		require.NoError(t, os.Rename(files[1]+suffix, files[1]+".1"+suffix))
	}
	fh, err = os.OpenFile(files[1]+".1", os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = fh.WriteString(readLines(t, files[1]+".1")[0]) // ends in its newline
	require.NoError(t, err)
	require.NoError(t, fh.Close())
	stray := filepath.Join(dir, "x", "notes.txt")
	require.NoError(t, os.MkdirAll(filepath.Dir(stray), 0o700))
	require.NoError(t, os.WriteFile(stray, []byte("hello\n"), 0o600))
	require.NoError(t, os.WriteFile(stray+integrity.StoreSuffix, nil, 0o600))

	te2 := startIntegrityExporters(t, cfg)
	res := checkFile(t, files[0], pubPath)
	require.Nil(t, res.Failure)
	require.Equal(t, res.Lines, res.Sealed, "sealed at start")
	require.Equal(t, 3, res.Checkpoints, "of 0 lines when the file was made, at shutdown, at start")
	rotated := checkFile(t, files[1]+".1", pubPath)
	require.Equal(t, rotated.Lines-1, rotated.Sealed, "the line appended to the rotated segment stays unsealed: %+v", rotated)
	_, err = os.Stat(stray + integrity.CheckpointsSuffix)
	require.ErrorIs(t, err, os.ErrNotExist, "the stray file was signed")
	te2.shutdown(t)
}

// Two exporters with integrity on one file (in one collector, or in two)
// would both seal it: the second is refused at start, naming the path,
// and starts once the first is shut down.
func TestIntegritySecondSealerRefused(t *testing.T) {
	keyPath, pubPath := writeKeys(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	newCfg := func() *Config {
		cfg := syncConfig()
		withFile(cfg, path, auditevent.PolicyOverride{})
		withIntegrity(cfg, keyPath)
		return cfg
	}
	first := startIntegrityExporters(t, newCfg())
	require.NoError(t, first.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))

	second, err := NewFactory().CreateTraces(context.Background(), exportertest.NewNopSettings(typ), newCfg())
	require.NoError(t, err)
	err = second.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorIs(t, err, integrity.ErrLogOwned)
	require.ErrorContains(t, err, "file: integrity: "+path+": another collector", "the key named once")
	require.NoError(t, second.Shutdown(context.Background()))

	first.shutdown(t)
	again := startIntegrityExporters(t, newCfg())
	again.shutdown(t)
	res := checkFile(t, path, pubPath)
	require.Nil(t, res.Failure)
	require.Positive(t, res.Sealed)
}
