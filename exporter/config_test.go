package sandboxauditexporter

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/exporter/internal/metadata"
	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/httpsink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/configtest"
)

func TestDefaultConfig(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))

	assert.False(t, cfg.File.HasValue(), "file sink is off until configured")
	assert.False(t, cfg.HTTP.HasValue(), "http sink is off until configured")
	assert.True(t, cfg.PayloadPolicy.IsZero())
	assert.Empty(t, cfg.PayloadPolicyByOp)
	assert.Equal(t, 30*time.Second, cfg.TimeoutConfig.Timeout)
	assert.Equal(t, configretry.NewDefaultBackOffConfig(), cfg.RetryConfig)
	assert.False(t, cfg.QueueConfig.HasValue(), "sending_queue is off: pushes are synchronous")

	// The defaults a section gets once the user writes it.
	q := cfg.QueueConfig.GetOrInsertDefault()
	assert.Equal(t, 1, q.NumConsumers, "one consumer keeps batches in order")
	assert.Nil(t, q.StorageID)

	fc := cfg.File.GetOrInsertDefault()
	assert.Equal(t, filesink.FsyncBatch, fc.Fsync)
	assert.Equal(t, 64, fc.MaxOpenFiles)
	hc := cfg.HTTP.GetOrInsertDefault()
	assert.Equal(t, httpsink.FormatNDJSON, hc.Format)
	assert.Equal(t, 30*time.Second, hc.ClientConfig.Timeout)
	sc := hc.Spool.GetOrInsertDefault()
	assert.Equal(t, int64(1<<30), sc.MaxSize)
	assert.Equal(t, 5*time.Second, sc.ReplayInterval)

	// With no sink the default config does not validate.
	err := confmap.Validate(NewFactory().CreateDefaultConfig())
	require.ErrorContains(t, err, "at least one sink must be configured")
}

func loadConfig(t *testing.T, file, name string) (*Config, error) {
	t.Helper()
	cfg, err := configtest.Load(t, NewFactory(), filepath.Join("testdata", file), component.NewIDWithName(metadata.Type, name))
	if err != nil {
		return nil, err
	}
	return cfg.(*Config), nil
}

func TestLoadConfig(t *testing.T) {
	def := func() *Config { return createDefaultConfig().(*Config) }
	httpDefaults := func() HTTPConfig { return *def().HTTP.GetOrInsertDefault() }

	tests := []struct {
		name string
		want func() *Config
	}{
		{
			name: "",
			want: func() *Config {
				c := def()
				c.File = configoptional.Some(FileConfig{Path: "./audit/events.jsonl", Fsync: filesink.FsyncBatch, MaxOpenFiles: 64, Integrity: defaultIntegrity(), Rotation: defaultRotation()})
				return c
			},
		},
		{
			name: "full",
			want: func() *Config {
				c := def()
				c.PayloadPolicy = auditevent.PolicyOverride{
					IncludeExecOutput: auditevent.Ptr(false),
					MaxStdoutChars:    auditevent.Ptr(8000),
					MaxStderrChars:    auditevent.Ptr(8000),
					IncludeWriteLen:   auditevent.Ptr(true),
				}
				c.PayloadPolicyByOp = map[string]auditevent.PolicyOverride{
					"exec":  {IncludeExecOutput: auditevent.Ptr(true)},
					"write": {IncludeWriteLen: auditevent.Ptr(false)},
				}
				c.File = configoptional.Some(FileConfig{
					Path:          "./audit/{session_id}.jsonl",
					Fsync:         filesink.FsyncAlways,
					MaxOpenFiles:  16,
					PayloadPolicy: auditevent.PolicyOverride{MaxStdoutChars: auditevent.Ptr(2000)},
					Integrity:     defaultIntegrity(),
					Rotation:      defaultRotation(),
				})
				h := httpDefaults()
				h.ClientConfig.Endpoint = "http://127.0.0.1:8088/v1/sandbox/events"
				h.ClientConfig.Timeout = 10 * time.Second
				h.ClientConfig.Headers = configopaque.MapList{{Name: "x-audit-tenant", Value: "team-a"}}
				h.ClientConfig.Compression = configcompression.Type("none")
				h.Format = httpsink.FormatEvent
				h.PayloadPolicy = auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(false)}
				h.Spool = configoptional.Some(SpoolConfig{Path: "./audit/spool.jsonl", MaxSize: 1 << 20, ReplayInterval: 2 * time.Second})
				c.HTTP = configoptional.Some(h)
				c.TimeoutConfig = exporterhelper.TimeoutConfig{Timeout: 20 * time.Second}
				q := c.QueueConfig.GetOrInsertDefault()
				q.NumConsumers = 2
				q.QueueSize = 100
				c.RetryConfig = configretry.BackOffConfig{
					Enabled:             true,
					InitialInterval:     time.Second,
					RandomizationFactor: configretry.NewDefaultBackOffConfig().RandomizationFactor,
					Multiplier:          configretry.NewDefaultBackOffConfig().Multiplier,
					MaxInterval:         5 * time.Second,
					MaxElapsedTime:      30 * time.Second,
				}
				return c
			},
		},
		{
			name: "file_only",
			want: func() *Config {
				c := def()
				c.File = configoptional.Some(FileConfig{Path: "./audit/events.jsonl", Fsync: filesink.FsyncNever, MaxOpenFiles: 64, Integrity: defaultIntegrity(), Rotation: defaultRotation()})
				return c
			},
		},
		{
			name: "http",
			want: func() *Config {
				c := def()
				h := httpDefaults()
				h.ClientConfig.Endpoint = "https://audit.example.com/v1/sandbox/events"
				h.Spool = def().HTTP.GetOrInsertDefault().Spool // still off
				c.HTTP = configoptional.Some(h)
				return c
			},
		},
		{
			name: "http_spool",
			want: func() *Config {
				c := def()
				h := httpDefaults()
				h.ClientConfig.Endpoint = "http://127.0.0.1:8088/v1/sandbox/events"
				h.Spool = configoptional.Some(SpoolConfig{Path: "./audit/spool.jsonl", MaxSize: 1 << 30, ReplayInterval: 5 * time.Second})
				c.HTTP = configoptional.Some(h)
				c.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
				return c
			},
		},
		{
			name: "queue_enabled",
			want: func() *Config {
				c := def()
				c.File = configoptional.Some(FileConfig{Path: "./audit/events.jsonl", Fsync: filesink.FsyncBatch, MaxOpenFiles: 64, Integrity: defaultIntegrity(), Rotation: defaultRotation()})
				c.QueueConfig.GetOrInsertDefault()
				return c
			},
		},
		{
			name: "queue_persistent",
			want: func() *Config {
				c := def()
				c.File = configoptional.Some(FileConfig{Path: "./audit/events.jsonl", Fsync: filesink.FsyncBatch, MaxOpenFiles: 64, Integrity: defaultIntegrity(), Rotation: defaultRotation()})
				storage := component.MustNewID("file_storage")
				c.QueueConfig.GetOrInsertDefault().StorageID = &storage
				return c
			},
		},
		{
			name: "rotation",
			want: func() *Config {
				c := def()
				c.File = configoptional.Some(FileConfig{Path: "./audit/events.jsonl", Fsync: filesink.FsyncBatch, MaxOpenFiles: 64, Integrity: defaultIntegrity(),
					Rotation: configoptional.Some(RotationConfig{MaxMegabytes: 100, Interval: time.Hour, MaxBackups: 100, MaxDays: 30, Compression: "zstd"})})
				return c
			},
		},
		{
			name: "rotation_defaults",
			want: func() *Config {
				c := def()
				c.File = configoptional.Some(FileConfig{Path: "./audit/events.jsonl", Fsync: filesink.FsyncBatch, MaxOpenFiles: 64, Integrity: defaultIntegrity(),
					Rotation: configoptional.Some(RotationConfig{MaxMegabytes: 100, MaxBackups: 100, Compression: "none"})})
				return c
			},
		},
		{
			name: "explicit_defaults",
			want: func() *Config {
				c := def()
				c.PayloadPolicy = auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(true), MaxStdoutChars: auditevent.Ptr(10)}
				c.PayloadPolicyByOp = map[string]auditevent.PolicyOverride{"exec": {MaxStdoutChars: auditevent.Ptr(8000)}}
				c.File = configoptional.Some(FileConfig{
					Path:          "./audit/{session_id_hex}/events.jsonl",
					Fsync:         filesink.FsyncBatch,
					MaxOpenFiles:  64,
					PayloadPolicy: auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(false)},
					Integrity:     defaultIntegrity(),
					Rotation:      defaultRotation(),
				})
				return c
			},
		},
	}
	for _, tt := range tests {
		t.Run("name="+tt.name, func(t *testing.T) {
			cfg, err := loadConfig(t, "config.yaml", tt.name)
			require.NoError(t, err)
			require.NoError(t, confmap.Validate(cfg))
			assert.Equal(t, tt.want(), cfg)
		})
	}
}

// TestLoadConfigQueue guards the tests above: the queue is off unless the
// section is written, "enabled: false" keeps it off, and enabling it keeps
// num_consumers 1 and takes a storage extension for a persistent queue.
func TestLoadConfigQueue(t *testing.T) {
	for name, want := range map[string]bool{"": false, "http_spool": false, "queue_enabled": true, "queue_persistent": true} {
		cfg, err := loadConfig(t, "config.yaml", name)
		require.NoError(t, err)
		assert.Equal(t, want, cfg.QueueConfig.HasValue(), "config %q", name)
		if want {
			assert.Equal(t, 1, cfg.QueueConfig.Get().NumConsumers, "config %q", name)
		}
	}
	cfg, err := loadConfig(t, "config.yaml", "queue_persistent")
	require.NoError(t, err)
	require.NotNil(t, cfg.QueueConfig.Get().StorageID)
	assert.Equal(t, component.MustNewID("file_storage"), *cfg.QueueConfig.Get().StorageID)
}

func TestExplicitDefaultStillOverrides(t *testing.T) {
	cfg, err := loadConfig(t, "config.yaml", "explicit_defaults")
	require.NoError(t, err)
	file, err := newSinkPolicies(cfg, cfg.File.Get().PayloadPolicy)
	require.NoError(t, err)

	// exporter level says include; the file sink sets the default value
	// false, which must still win.
	assert.False(t, file.Get("read").IncludeExecOutput)
	assert.False(t, file.Get("exec").IncludeExecOutput)
	// exporter level sets 10; the exec level sets the default 8000, which
	// must still win for exec and only for exec.
	assert.Equal(t, 8000, file.Get("exec").MaxStdoutChars)
	assert.Equal(t, 10, file.Get("read").MaxStdoutChars)
	// Keys nobody set keep the reference default.
	assert.Equal(t, 8000, file.Get("exec").MaxStderrChars)
	assert.True(t, file.Get("write").IncludeWriteLen)
}

func TestPolicyLevels(t *testing.T) {
	cfg, err := loadConfig(t, "config.yaml", "full")
	require.NoError(t, err)
	file, err := newSinkPolicies(cfg, cfg.File.Get().PayloadPolicy)
	require.NoError(t, err)
	http, err := newSinkPolicies(cfg, cfg.HTTP.Get().PayloadPolicy)
	require.NoError(t, err)

	assert.Equal(t, auditevent.Policy{IncludeExecOutput: true, MaxStdoutChars: 2000, MaxStderrChars: 8000, IncludeWriteLen: true}, file.Get("exec").Policy)
	assert.Equal(t, auditevent.Policy{IncludeExecOutput: false, MaxStdoutChars: 2000, MaxStderrChars: 8000, IncludeWriteLen: true}, file.Get("read").Policy)
	assert.Equal(t, auditevent.Policy{IncludeExecOutput: false, MaxStdoutChars: 2000, MaxStderrChars: 8000, IncludeWriteLen: false}, file.Get("write").Policy)
	assert.Equal(t, auditevent.Policy{IncludeExecOutput: false, MaxStdoutChars: 8000, MaxStderrChars: 8000, IncludeWriteLen: true}, http.Get("exec").Policy)
}

type badConfig struct {
	name string
	// unmarshal: the error comes from Unmarshal, not Validate.
	unmarshal bool
	// want are substrings of the error; each names the key at fault.
	// Keys inside an optional section (file, http, spool) are joined with
	// ": " (configoptional validates its value as a separate config),
	// other nesting with "::" (confmap.Validate's key delimiter).
	want []string
}

func badConfigs() []badConfig {
	return []badConfig{
		{name: "no_sink", want: []string{"at least one sink must be configured: file or http"}},
		{name: "rotation_bad_compression", want: []string{`file: rotation: compression: "gzip" is not one of "zstd", "none"`}},
		{name: "rotation_negative", want: []string{"file: rotation: max_megabytes: must be between 0 and 8796093022207, got -1",
			"max_backups: must be >= 0, got -2", "max_days: must be between 0 and 106751, got -3"}},
		// 2^44 MiB is 2^64 bytes, which wraps to 0 (no size limit); 213504
		// days wrap to about 25 minutes of retention.
		{name: "rotation_overflow", want: []string{"file: rotation: max_megabytes: must be between 0 and 8796093022207, got 17592186044416",
			"max_days: must be between 0 and 106751, got 213504"}},
		{name: "rotation_never", want: []string{"file: rotation: max_megabytes and interval are both 0"}},
		{name: "rotation_short_interval", want: []string{"file: rotation: interval: must be 0 (no time-based rotation) or between 1s and 8784h0m0s, got 10ms"}},
		{name: "rotation_years", want: []string{"file: rotation: interval: must be 0 (no time-based rotation) or between 1s and 8784h0m0s, got 87840h0m0s"}},
		{name: "spool_years", want: []string{"http: spool: replay_interval: must be at most 1h0m0s, got 8760h0m0s",
			"retry_on_failure::max_interval: must be at most 1h0m0s, got 8760h0m0s"}},
		{name: "unknown_op", want: []string{`payload_policy_by_op: unknown op "frobnicate" (known: start, stop, exec`}},
		{name: "negative_max_stdout", want: []string{"payload_policy: max_stdout_chars: must be >= 0, got -1"}},
		{name: "negative_max_stderr_by_op", want: []string{"payload_policy_by_op::exec: max_stderr_chars: must be >= 0, got -5"}},
		{name: "file_negative_policy", want: []string{"file: payload_policy: max_stdout_chars: must be >= 0"}},
		{name: "http_negative_policy", want: []string{"http: payload_policy: max_stderr_chars: must be >= 0"}},
		{name: "bad_fsync", want: []string{"file: fsync: ", `"sometimes"`, "never", "batch", "always"}},
		{name: "file_no_path", want: []string{"file: path: must be set"}},
		{name: "file_unknown_placeholder", want: []string{`file: path: unknown placeholder "{session}" in "./audit/{session}.jsonl" (known: {session_id}, {session_id_hex})`}},
		{name: "file_unbalanced_placeholder", want: []string{"file: path: ", "unmatched '{'"}},
		{name: "file_directory_path", want: []string{"file: path: ", "names a directory"}},
		{name: "file_dotdot_after_placeholder", want: []string{"file: path: ", `element ".." after the first placeholder`}},
		{name: "file_negative_max_open_files", want: []string{"file: max_open_files: must be >= 0, got -1"}},
		{name: "bad_format", want: []string{"http: format: ", `"xml"`, "event", "ndjson"}},
		{name: "http_no_endpoint", want: []string{"http: endpoint: must be set"}},
		{name: "http_bad_scheme", want: []string{"http: endpoint: must be an absolute http:// or https:// URL"}},
		{name: "http_relative_endpoint", want: []string{"http: endpoint: must be an absolute http:// or https:// URL"}},
		{name: "http_unparsable_endpoint", want: []string{"http: endpoint: not a valid URL"}},
		{name: "http_bad_proxy_url", want: []string{"http: proxy_url: not a valid absolute URL"}},
		{name: "http_header_newline", want: []string{"http: headers: Authorization: the value holds a character a header cannot carry"}},
		{name: "http_negative_timeout", want: []string{"http: timeout: must be >= 0, got -1s"}},
		{name: "file_existing_directory", want: []string{"file: path: ./testdata is a directory; name a file in it"}},
		{name: "spool_no_path", want: []string{"http: spool: path: must be set"}},
		{name: "spool_negative_max_size", want: []string{"http: spool: max_size: must be >= 0, got -1"}},
		{name: "spool_zero_replay_interval", want: []string{"http: spool: replay_interval: must be > 0"}},
		{name: "spool_is_audit_file", want: []string{`http::spool::path: must not be the file sink's file "./audit/events.jsonl"`}},
		{name: "spool_is_a_session_file", want: []string{`http::spool::path: must not be a file of the file sink's path "./audit/{session_id}.jsonl"`}},
		{name: "negative_timeout", want: []string{"timeout", "must be greater than or equal to 0"}},
		{name: "bad_retry", want: []string{"retry_on_failure: ", "multiplier"}},
		{name: "bad_queue", want: []string{"sending_queue: ", "queue_size"}},
		{name: "bad_tls", want: []string{"tls: ", "either a CA file or the PEM-encoded string"}},
		{name: "bad_compression", unmarshal: true, want: []string{"compression", "lz77"}},
		{name: "typo_in_file", unmarshal: true, want: []string{"fsnyc"}},
		{name: "typo_in_policy", unmarshal: true, want: []string{"include_exec_outputs"}},
		{name: "policy_wrong_type", unmarshal: true, want: []string{"max_stdout_chars"}},
		{name: "unknown_top_level_key", unmarshal: true, want: []string{"spool"}},
		// Taken as 30ns, 0 (unbounded) and a negative number until refused.
		{name: "http_bare_timeout", unmarshal: true, want: []string{"http::timeout: a duration needs a unit"}},
		{name: "spool_fractional_max_size", unmarshal: true, want: []string{"http::spool::max_size: must be a whole number within range (got 0.9)"}},
		{name: "policy_number_out_of_range", unmarshal: true, want: []string{"payload_policy::max_stdout_chars: must be a whole number within range"}},
		{name: "redact_pattern_split", unmarshal: true, want: []string{"payload_policy_by_op::exec::redact::patterns: one string is split at each comma"}},
		{name: "spool_existing_directory", want: []string{"http: spool: path: ./testdata is a directory; name a file in it"}},
		{name: "spool_placeholder", want: []string{"http: spool: path: the spool is one file; {session_id} and {session_id_hex} are expanded only in file::path"}},
		{name: "file_dot_path", want: []string{"file: path: ", `"./audit/missing/." names a directory`}},
		{name: "file_dotdot_path", want: []string{"file: path: ", `"./audit/missing/sub/.." names a directory`}},
		{name: "spool_directory_path", want: []string{"http: spool: path: ", `"./spool/missing/" names a directory`}},
		{name: "spool_nul_path", want: []string{"http: spool: path: contains a NUL byte"}},
		{name: "file_control_path", want: []string{"file: path: holds the control character 0x0a at byte 20"}},
		{name: "spool_control_path", want: []string{"http: spool: path: holds the control character 0x09 at byte 8"}},
		{name: "retry_without_a_wait", want: []string{"retry_on_failure::initial_interval: must be at least 10ms when retries are enabled, got 1ns",
			"retry_on_failure::max_interval: must be 0 (no cap) or at least 10ms, got 1ms", "retry_on_failure::multiplier: must be at least 1, got 0.5"}},
		{name: "file_tilde_path", want: []string{`file: path: "~/audit/events.jsonl" begins with "~/", which is not expanded`}},
		{name: "redact_patterns_never_apply", want: []string{"payload_policy_by_op::exec::redact: patterns written, but redaction is off (redact.enabled: false) wherever this level applies"}},
		{name: "witness_bare_timeout", unmarshal: true, want: []string{"file::integrity::witnesses::0::timeout: a duration needs a unit"}},
	}
}

// defaultIntegrity is a file section's integrity when not written: off,
// with the defaults a written section starts from.
func defaultRotation() configoptional.Optional[RotationConfig] {
	return createDefaultConfig().(*Config).File.GetOrInsertDefault().Rotation
}

func defaultIntegrity() configoptional.Optional[IntegrityConfig] {
	return createDefaultConfig().(*Config).File.GetOrInsertDefault().Integrity
}

func TestLoadBadConfig(t *testing.T) {
	for _, tt := range badConfigs() {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(t, "config_bad.yaml", tt.name)
			if tt.unmarshal {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
				err = confmap.Validate(cfg)
				require.Error(t, err)
			}
			for _, w := range tt.want {
				assert.ErrorContains(t, err, w)
			}
			assert.NotContains(t, err.Error(), "SECRET", "a secret of the config in its error")
		})
	}
}

// TestSpoolThroughASymlinkIsTheAuditFile: a spool path that reaches the
// audit file through a symlinked directory is refused like the same path.
func TestSpoolThroughASymlinkIsTheAuditFile(t *testing.T) {
	dir := t.TempDir()
	alias := filepath.Join(t.TempDir(), "alias")
	require.NoError(t, os.Symlink(dir, alias))
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.File.GetOrInsertDefault().Path = filepath.Join(dir, "events.jsonl")
	hc := cfg.HTTP.GetOrInsertDefault()
	hc.ClientConfig.Endpoint = "http://127.0.0.1:9/x"
	hc.Spool.GetOrInsertDefault().Path = filepath.Join(alias, "events.jsonl")
	require.ErrorContains(t, confmap.Validate(cfg), "http::spool::path: must not be the file sink's file")

	hc.Spool.Get().Path = filepath.Join(alias, "spool.jsonl")
	require.NoError(t, confmap.Validate(cfg))
}

// TestSpoolThroughASymlinkIsASessionFile: a spool path that reaches a
// file of a templated path through a symlinked directory, either way
// round, is refused like the same path: it was refused only when written
// through the template's own directory.
func TestSpoolThroughASymlinkIsASessionFile(t *testing.T) {
	dir := t.TempDir()
	alias := filepath.Join(t.TempDir(), "alias")
	require.NoError(t, os.Symlink(dir, alias))
	const session = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b.jsonl"
	for _, tc := range []struct{ file, spool string }{
		{filepath.Join(dir, "{session_id}.jsonl"), filepath.Join(alias, session)},
		{filepath.Join(alias, "{session_id}.jsonl"), filepath.Join(dir, session)},
	} {
		cfg := NewFactory().CreateDefaultConfig().(*Config)
		cfg.File.GetOrInsertDefault().Path = tc.file
		hc := cfg.HTTP.GetOrInsertDefault()
		hc.ClientConfig.Endpoint = "http://127.0.0.1:9/x"
		hc.Spool.GetOrInsertDefault().Path = tc.spool
		require.ErrorContains(t, confmap.Validate(cfg), "http::spool::path: must not be a file of the file sink's path", tc.spool)

		hc.Spool.Get().Path = filepath.Join(filepath.Dir(tc.spool), "spool.jsonl")
		require.NoError(t, confmap.Validate(cfg))
	}
}

// TestBadConfigTableIsComplete keeps testdata and the table in step: every
// entry of config_bad.yaml has an expected error, and the other way round.
func TestBadConfigTableIsComplete(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config_bad.yaml"))
	require.NoError(t, err)
	var inFile, inTable []string
	for k := range cm.ToStringMap() {
		inFile = append(inFile, k)
	}
	for _, b := range badConfigs() {
		inTable = append(inTable, component.NewIDWithName(metadata.Type, b.name).String())
	}
	assert.ElementsMatch(t, inFile, inTable)
}

// TestTLSFileThatIsAFIFOIsRefused: confighttp's read of a FIFO named as a
// TLS file hung the collector's start, deaf to signals.
func TestTLSFileThatIsAFIFOIsRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	hc := cfg.HTTP.GetOrInsertDefault()
	hc.ClientConfig.Endpoint = "https://127.0.0.1:9/x"
	hc.ClientConfig.TLS.CAFile = fifo
	require.ErrorContains(t, confmap.Validate(cfg), "tls::ca_file: "+fifo+" is not a regular file")
}

// TestFileNameLongerThanADirectoryEntryIsRefused: a file name no file
// system takes (each placeholder counted as the session id it becomes,
// and the room rotated segments and integrity sidecars add to it) passed
// validate and start, then failed every batch with "file name too long".
func TestFileNameLongerThanADirectoryEntryIsRefused(t *testing.T) {
	dir := t.TempDir()
	name := func(n int) string { return strings.Repeat("a", n) }
	for _, tc := range []struct {
		path      string
		rotation  bool
		integrity bool
		ok        bool
	}{
		{path: name(255), ok: true},
		{path: name(256)},
		{path: name(219) + "{session_id}", ok: true},
		{path: name(220) + "{session_id}"},
		{path: name(223) + "{session_id_hex}", ok: true},
		{path: name(224) + "{session_id_hex}"},
		{path: name(256) + "/{session_id}.jsonl"},
		{path: "{session_id}/" + name(256)},
		{path: name(255 - filesink.SegmentNameGrowth), rotation: true, ok: true},
		{path: name(256 - filesink.SegmentNameGrowth), rotation: true},
		{path: name(255 - integrity.NameGrowth), integrity: true, ok: true},
		{path: name(256 - integrity.NameGrowth), integrity: true},
	} {
		fc := FileConfig{Path: filepath.Join(dir, tc.path)}
		if tc.rotation {
			fc.Rotation = configoptional.Some(RotationConfig{MaxMegabytes: 1})
		}
		if tc.integrity {
			fc.Integrity = configoptional.Some(IntegrityConfig{})
		}
		err := fc.Validate()
		if tc.ok {
			assert.NotContains(t, fmt.Sprint(err), "path:", "%d bytes: %s", len(tc.path), tc.path)
			continue
		}
		require.ErrorContains(t, err, "path: ", "%d bytes: %s", len(tc.path), tc.path)
		assert.ErrorContains(t, err, "longer than the 255 bytes a file name may have")
		assert.Less(t, len(err.Error()), 400, "the error shows the start of a long name only")
	}
}

// TestNegativeRetryValueIsRefusedOnce: configretry refuses a negative
// interval or multiplier itself; the exporter's own floor said so again
// in other words, naming the key twice.
func TestNegativeRetryValueIsRefusedOnce(t *testing.T) {
	cfg := syncConfig()
	withFile(cfg, filepath.Join(t.TempDir(), "events.jsonl"), auditevent.PolicyOverride{})
	cfg.RetryConfig.InitialInterval, cfg.RetryConfig.MaxInterval, cfg.RetryConfig.Multiplier = -time.Second, -time.Second, -1
	err := confmap.Validate(cfg)
	require.Error(t, err)
	for _, key := range []string{"initial_interval", "max_interval", "multiplier"} {
		assert.Equal(t, 1, strings.Count(err.Error(), key), "%s in %s", key, err)
	}
}
