package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/confcheck"
	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/httpsink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
)

// Config is the sandboxaudit exporter configuration.
//
// Payload policy has three levels (docs/format.md, "The payload policy"):
// payload_policy, then payload_policy_by_op[op], then the sink's own
// payload_policy. Each level overrides only the keys the user writes, so a
// key set to its default value still overrides the level below.
type Config struct {
	// PayloadPolicy is the exporter-wide policy level.
	PayloadPolicy auditevent.PolicyOverride `mapstructure:"payload_policy"`
	// PayloadPolicyByOp holds per-operation levels, keyed by op name.
	PayloadPolicyByOp map[string]auditevent.PolicyOverride `mapstructure:"payload_policy_by_op"`

	// File is the JSONL file sink; enabled by writing the section.
	File configoptional.Optional[FileConfig] `mapstructure:"file"`
	// HTTP is the HTTP delivery sink; enabled by writing the section.
	HTTP configoptional.Optional[HTTPConfig] `mapstructure:"http"`

	// TimeoutConfig bounds one push, HTTP retries included; what the HTTP
	// sink has not delivered by then is spooled.
	TimeoutConfig exporterhelper.TimeoutConfig `mapstructure:",squash"`
	// QueueConfig is exporterhelper's sending_queue. It is disabled by
	// default: each push is then synchronous, so when the upstream
	// component's Consume call returns nil the events are in the audit
	// file (synced per file.fsync) and/or delivered or in the HTTP spool,
	// and a failure such as a full spool is returned to the caller (the
	// sandboxaudit receiver answers its client 503) instead of being
	// logged and dropped by the queue. An in-memory queue also loses its
	// batches on a crash. Enable it (write the section, or enabled: true)
	// for throughput, preferably with storage: <file_storage extension id>
	// so queued batches survive a restart. Enabled, it defaults to
	// num_consumers: 1, which keeps batches in arrival order in the file;
	// more consumers trade that order for throughput.
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	// RetryConfig is handed to the HTTP sink's own retry loop, not to
	// exporterhelper: see helperOptions. With a spool the sink does not
	// retry live, and only MaxInterval (the replayer's longest pause)
	// applies.
	RetryConfig configretry.BackOffConfig `mapstructure:"retry_on_failure"`

	// MaxLineBytes bounds an event's canonical line, escapes included. It
	// is counted before the line is built; a longer event is refused (a
	// permanent error), counted and logged by field name.
	MaxLineBytes int `mapstructure:"max_line_bytes"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Unmarshal decodes conf, then refuses the numbers the decoder would have
// changed quietly (a fraction for an integer, a duration without a unit),
// naming the key.
func (cfg *Config) Unmarshal(conf *confmap.Conf) error { return confcheck.Unmarshal(conf, cfg) }

// FileConfig configures the file sink.
type FileConfig struct {
	// Path is the file the lines are appended to; it may hold the
	// placeholders {session_id} and {session_id_hex}.
	Path string `mapstructure:"path"`
	// Fsync is never, batch or always.
	Fsync filesink.FsyncMode `mapstructure:"fsync"`
	// MaxOpenFiles bounds the open files of a templated path.
	MaxOpenFiles int `mapstructure:"max_open_files"`
	// PayloadPolicy is this sink's policy level.
	PayloadPolicy auditevent.PolicyOverride `mapstructure:"payload_policy"`
	// Integrity seals the file in a Merkle tree with signed checkpoints
	// (docs/tamper-evidence.md); enabled by writing the section.
	Integrity configoptional.Optional[IntegrityConfig] `mapstructure:"integrity"`
	// Rotation rotates, compresses and retires the files (docs/history.md);
	// enabled by writing the section.
	Rotation configoptional.Optional[RotationConfig] `mapstructure:"rotation"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// IntegrityConfig configures the file sink's tamper evidence.
type IntegrityConfig struct {
	// SigningKeyFile holds a golang.org/x/mod/sumdb/note signer key
	// ("sandboxaudit keygen" writes one); it must be mode 0600.
	SigningKeyFile string `mapstructure:"signing_key_file"`
	// CheckpointInterval is how often a checkpoint is appended for each
	// file that grew; 0 means defaultCheckpointInterval.
	CheckpointInterval time.Duration `mapstructure:"checkpoint_interval"`
	// Witnesses cosign every newest checkpoint with the C2SP tlog-witness
	// protocol (docs/witnesses.md).
	Witnesses []WitnessConfig `mapstructure:"witnesses"`
	// WitnessQuorum is how many witnesses must cosign a checkpoint; 0
	// means all of them.
	WitnessQuorum int `mapstructure:"witness_quorum"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// WitnessConfig is one witness: its add-checkpoint submission prefix
// (endpoint, with every confighttp client key) and its cosignature key.
type WitnessConfig struct {
	ClientConfig confighttp.ClientConfig `mapstructure:",squash"`
	// PublicKey is the witness's cosignature verifier key
	// (name+hash+base64, C2SP signed-note).
	PublicKey string `mapstructure:"public_key"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// RotationConfig configures the file sink's rotation. The names and
// defaults are the contrib fileexporter's, with interval and compression
// added.
type RotationConfig struct {
	// MaxMegabytes rotates a file before a batch that would take it past
	// this size; 0 means no size limit.
	MaxMegabytes int `mapstructure:"max_megabytes"`
	// Interval rotates a file this long after its segment began; 0 means
	// not by time.
	Interval time.Duration `mapstructure:"interval"`
	// MaxBackups keeps at most this many closed segments per file; 0 keeps
	// all.
	MaxBackups int `mapstructure:"max_backups"`
	// MaxDays removes closed segments older than this many days (24 h);
	// 0 keeps them whatever their age.
	MaxDays int `mapstructure:"max_days"`
	// Compression is zstd or none.
	Compression string `mapstructure:"compression"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Compression values of file.rotation.compression.
const (
	compressionNone = "none"
	compressionZstd = "zstd"
)

// maxRotationMegabytes and maxRotationDays are the largest values whose
// byte count and age still fit an int64 and a time.Duration: a larger one
// would wrap to a small or negative bound (max_days: 213504 would keep
// segments for 25 minutes).
const (
	maxRotationMegabytes = math.MaxInt64 >> 20
	maxRotationDays      = int64(math.MaxInt64 / (24 * time.Hour))
)

// maxRotationInterval is a yearly rotation; a longer interval is a unit
// slip, and 0 already means no time-based rotation.
const maxRotationInterval = 366 * 24 * time.Hour

// Validate checks the rotation keys.
func (c *RotationConfig) Validate() error {
	var errs []error
	if c.MaxMegabytes < 0 || int64(c.MaxMegabytes) > maxRotationMegabytes {
		errs = append(errs, fmt.Errorf("max_megabytes: must be between 0 and %d, got %d", int64(maxRotationMegabytes), c.MaxMegabytes))
	}
	if c.Interval < 0 || c.Interval > 0 && c.Interval < time.Second || c.Interval > maxRotationInterval {
		errs = append(errs, fmt.Errorf("interval: must be 0 (no time-based rotation) or between 1s and %s, got %s", maxRotationInterval, c.Interval))
	}
	if c.MaxBackups < 0 {
		errs = append(errs, fmt.Errorf("max_backups: must be >= 0, got %d", c.MaxBackups))
	}
	if c.MaxDays < 0 || int64(c.MaxDays) > maxRotationDays {
		errs = append(errs, fmt.Errorf("max_days: must be between 0 and %d, got %d", maxRotationDays, c.MaxDays))
	}
	if c.Compression != compressionNone && c.Compression != compressionZstd && c.Compression != "" {
		errs = append(errs, fmt.Errorf("compression: %q is not one of %q, %q", c.Compression, compressionZstd, compressionNone))
	}
	if c.MaxMegabytes == 0 && c.Interval == 0 {
		errs = append(errs, errors.New("max_megabytes and interval are both 0: the file would never rotate"))
	}
	return errors.Join(errs...)
}

// HTTPConfig configures the HTTP sink.
type HTTPConfig struct {
	// ClientConfig brings endpoint, headers, TLS, auth, compression and the
	// per-request timeout the collector way.
	ClientConfig confighttp.ClientConfig `mapstructure:",squash"`
	// Format is event (one application/json POST per event) or ndjson (one
	// application/x-ndjson POST per batch).
	Format httpsink.Format `mapstructure:"format"`
	// PayloadPolicy is this sink's policy level.
	PayloadPolicy auditevent.PolicyOverride `mapstructure:"payload_policy"`
	// Spool keeps lines that could not be delivered; enabled by writing the
	// section.
	Spool configoptional.Optional[SpoolConfig] `mapstructure:"spool"`
	// DebugResponseBody shows the start of the endpoint's error responses
	// in errors and logs, with every header value sent (configured or
	// added by an auth extension) and the endpoint's password and query
	// values redacted. Off by default: an
	// endpoint may echo the request's headers, tokens included.
	DebugResponseBody bool `mapstructure:"debug_response_body"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// SpoolConfig configures the HTTP sink's local spool.
type SpoolConfig struct {
	// Path is the spool file (JSONL, same format as the Python sink's
	// spool_path).
	Path string `mapstructure:"path"`
	// MaxSize bounds the spool's pending (not yet replayed) bytes; 0 means
	// unbounded. Until a replay round compacts the acknowledged prefix
	// away, the file itself may hold about twice that (plus the spool's
	// 8 MiB compaction threshold).
	MaxSize int64 `mapstructure:"max_size"`
	// ReplayInterval is the pause between replay rounds.
	ReplayInterval time.Duration `mapstructure:"replay_interval"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks what the nested Validate methods cannot see: at least one
// sink, and the op keys of payload_policy_by_op. Policy levels, fsync,
// format, the HTTP client, timeout, queue and retry validate themselves (confmap
// walks every field and prefixes each error with its key path).
func (cfg *Config) Validate() error {
	var errs []error
	if !cfg.File.HasValue() && !cfg.HTTP.HasValue() {
		errs = append(errs, errors.New("at least one sink must be configured: file or http"))
	}
	if err := payloadpolicy.CheckOps(cfg.PayloadPolicyByOp); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, payloadpolicy.CheckRedact(cfg.PayloadPolicy, cfg.PayloadPolicyByOp))
	sinks := map[string]auditevent.PolicyOverride{}
	if fc := cfg.File.Get(); fc != nil {
		errs = append(errs, payloadpolicy.CheckLevel("file::payload_policy", fc.PayloadPolicy))
		sinks["file::payload_policy"] = fc.PayloadPolicy
	}
	if hc := cfg.HTTP.Get(); hc != nil {
		errs = append(errs, payloadpolicy.CheckLevel("http::payload_policy", hc.PayloadPolicy))
		sinks["http::payload_policy"] = hc.PayloadPolicy
	}
	errs = append(errs, payloadpolicy.CheckRedactUsed(cfg.PayloadPolicy, cfg.PayloadPolicyByOp, sinks))
	if err := cfg.checkSpoolIsNotAuditFile(); err != nil {
		errs = append(errs, err)
	}
	if cfg.MaxLineBytes < minLineBytes {
		errs = append(errs, fmt.Errorf("max_line_bytes: must be at least %d, room for an event's fixed fields (got %d)", minLineBytes, cfg.MaxLineBytes))
	}
	errs = append(errs, checkRetry(&cfg.RetryConfig))
	return errors.Join(errs...)
}

// minRetryInterval is the shortest retry_on_failure interval taken, the
// spool's replay_interval floor; maxRetryInterval is the longest
// max_interval, the spool's replay_interval ceiling.
const (
	minRetryInterval = minReplayInterval
	maxRetryInterval = maxReplayInterval
)

// checkRetry refuses retries that never wait, which configretry takes: the
// HTTP sink would send each failed request again in a loop (4,000 requests
// in 3 s to an endpoint answering 503) until max_elapsed_time.
func checkRetry(c *configretry.BackOffConfig) error {
	var errs []error
	// max_interval is the spool replayer's longest pause, retries on or
	// off: a year's would leave the spool undelivered.
	if c.MaxInterval > maxRetryInterval {
		errs = append(errs, fmt.Errorf("retry_on_failure::max_interval: must be at most %s, got %s", maxRetryInterval, c.MaxInterval))
	}
	if !c.Enabled {
		return errors.Join(errs...)
	}
	// A negative value configretry refuses itself, naming the key.
	if c.InitialInterval >= 0 && c.InitialInterval < minRetryInterval {
		errs = append(errs, fmt.Errorf("retry_on_failure::initial_interval: must be at least %s when retries are enabled, got %s", minRetryInterval, c.InitialInterval))
	}
	if c.MaxInterval > 0 && c.MaxInterval < minRetryInterval {
		errs = append(errs, fmt.Errorf("retry_on_failure::max_interval: must be 0 (no cap) or at least %s, got %s", minRetryInterval, c.MaxInterval))
	}
	if c.Multiplier >= 0 && c.Multiplier < 1 {
		// Below 1 each wait is shorter than the one before.
		errs = append(errs, fmt.Errorf("retry_on_failure::multiplier: must be at least 1, got %g", c.Multiplier))
	}
	return errors.Join(errs...)
}

// checkSpoolIsNotAuditFile refuses a spool at the audit file's path, or at
// one of the files a templated path gives: the spool trims and rewrites its
// file after replay, which would destroy the audit trail.
func (cfg *Config) checkSpoolIsNotAuditFile() error {
	fc, hc := cfg.File.Get(), cfg.HTTP.Get()
	if fc == nil || hc == nil || fc.Path == "" {
		return nil
	}
	sc := hc.Spool.Get()
	if sc == nil || sc.Path == "" {
		return nil
	}
	filePath, err1 := filepath.Abs(fc.Path)
	spoolPath, err2 := filepath.Abs(sc.Path)
	if err1 != nil || err2 != nil {
		return nil
	}
	if filePath == spoolPath || sameEntry(filePath, spoolPath) {
		return fmt.Errorf("http::spool::path: must not be the file sink's file %q (the spool would send it away and trim it)", fc.Path)
	}
	if match, err := filesink.Matcher(resolveDirs(filePath)); err == nil && match(resolveDirs(spoolPath)) {
		return fmt.Errorf("http::spool::path: must not be a file of the file sink's path %q (the spool would send it away and trim it)", fc.Path)
	}
	return nil
}

// resolveDirs is the absolute path with the symbolic links of its longest
// existing directory resolved, so a template's directory and a spool's
// compare equal however each is reached. The elements below, a template's
// placeholders among them, are kept as written.
func resolveDirs(path string) string {
	dir, rest := filepath.Dir(path), filepath.Base(path)
	for {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return path
		}
		dir, rest = parent, filepath.Join(filepath.Base(dir), rest)
	}
}

// sameEntry reports whether a and b name the same entry of the same
// directory, reached through different paths (a symlinked directory). The
// spool and the file sink also refuse each other's files when they open
// them, which covers two exporters and paths that do not exist yet.
func sameEntry(a, b string) bool {
	if filepath.Base(a) != filepath.Base(b) {
		return false
	}
	da, err1 := os.Stat(filepath.Dir(a))
	db, err2 := os.Stat(filepath.Dir(b))
	return err1 == nil && err2 == nil && os.SameFile(da, db)
}

// Validate checks the file sink's own keys.
func (c *FileConfig) Validate() error {
	var errs []error
	// The sink's own check, so the config refuses exactly what the sink
	// would; the error gains the key here.
	if err := filesink.ValidatePath(c.Path); err != nil {
		errs = append(errs, fmt.Errorf("path: %w", err))
	} else if err := filesink.CheckNameLength(c.Path, c.nameGrowth()); err != nil {
		errs = append(errs, fmt.Errorf("path: %w", err))
	}
	if c.MaxOpenFiles < 0 {
		errs = append(errs, fmt.Errorf("max_open_files: must be >= 0, got %d", c.MaxOpenFiles))
	}
	return errors.Join(errs...)
}

// nameGrowth is the most the names made beside the audit file (rotated
// segments, integrity sidecars) add to its name.
func (c *FileConfig) nameGrowth() int {
	growth := 0
	if c.Rotation.HasValue() {
		growth = filesink.SegmentNameGrowth
	}
	if c.Integrity.HasValue() {
		growth = max(growth, integrity.NameGrowth)
	}
	return growth
}

// Validate checks the integrity keys. The signing key is loaded here so a
// key file others can read, or one holding no key, stops the collector at
// start with the key named; the error never shows the key.
func (c *IntegrityConfig) Validate() error {
	var errs []error
	logKey := ""
	if c.SigningKeyFile == "" {
		errs = append(errs, errors.New("signing_key_file: must be set"))
	} else if keys, err := integrity.LoadSigningKey(c.SigningKeyFile); err != nil {
		errs = append(errs, fmt.Errorf("signing_key_file: %w", err))
	} else {
		logKey = keys.VKey
	}
	if c.CheckpointInterval < 0 || c.CheckpointInterval > 0 && c.CheckpointInterval < minCheckpointInterval ||
		c.CheckpointInterval > maxCheckpointInterval {
		// A seal re-reads the sidecars and signs: every nanosecond spun a core.
		errs = append(errs, fmt.Errorf("checkpoint_interval: must be 0 (the default, %s) or between %s and %s, got %s",
			defaultCheckpointInterval, minCheckpointInterval, maxCheckpointInterval, c.CheckpointInterval))
	}
	errs = append(errs, c.validateWitnesses(logKey))
	return errors.Join(errs...)
}

// maxWitnessTimeout bounds one add-checkpoint request: a witness that
// hangs longer holds back the cosignatures of every later checkpoint.
const maxWitnessTimeout = 5 * time.Minute

// validateWitnesses checks each witness's endpoint, client keys, timeout
// and key (not logKey, the log's own verifier key; "": not loaded), and
// the quorum.
func (c *IntegrityConfig) validateWitnesses(logKey string) error {
	var errs []error
	// A witness listed twice, or its key under two names, would count
	// twice toward the quorum with one cosignature.
	type first struct {
		i    int
		name string
	}
	seen := make(map[string]first, len(c.Witnesses))
	for i := range c.Witnesses {
		w := &c.Witnesses[i]
		prefix := fmt.Sprintf("witnesses::%d::", i)
		errs = append(errs, validateClient(prefix, &w.ClientConfig))
		if w.ClientConfig.Compression.IsCompressed() {
			// The protocol's body is plain text: a witness would refuse
			// every request with 400.
			errs = append(errs, fmt.Errorf("%scompression: a witness reads the request body as plain text; remove %q", prefix, w.ClientConfig.Compression))
		}
		switch round := integrity.RoundTimeout(c.interval()); {
		case w.ClientConfig.Timeout > maxWitnessTimeout:
			errs = append(errs, fmt.Errorf("%stimeout: must be at most %s, got %s", prefix, maxWitnessTimeout, w.ClientConfig.Timeout))
		case w.ClientConfig.Timeout > round:
			// The round's deadline would end the request first.
			errs = append(errs, fmt.Errorf("%stimeout: %s is longer than a witness round may take (checkpoint_interval × 10 + 10s = %s)",
				prefix, w.ClientConfig.Timeout, round))
		}
		if w.PublicKey == "" {
			errs = append(errs, fmt.Errorf("%spublic_key: must be set", prefix))
			continue
		}
		if logKey != "" && witness.SameKey(w.PublicKey, logKey) {
			errs = append(errs, fmt.Errorf("%spublic_key: the log's own signing key (signing_key_file): a witness cosigns "+
				"with a key of its own, or the key's holder could cosign what it rewrote", prefix))
			continue
		}
		v, err := witness.ParseKey(w.PublicKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("%spublic_key: %w", prefix, err))
			continue
		}
		key := witness.PublicKey(v)
		if f, dup := seen[key]; dup {
			errs = append(errs, fmt.Errorf("%spublic_key: the same witness as witnesses::%d (%s); a witness counts once toward the quorum", prefix, f.i, f.name))
			continue
		}
		seen[key] = first{i, v.Name()}
	}
	if len(c.Witnesses) > witness.MaxWitnesses {
		// verify takes no more keys: the cosignatures could not be checked.
		errs = append(errs, fmt.Errorf("witnesses: %d witnesses, limit %d", len(c.Witnesses), witness.MaxWitnesses))
	}
	if c.WitnessQuorum < 0 || c.WitnessQuorum > len(c.Witnesses) {
		errs = append(errs, fmt.Errorf("witness_quorum: must be between 0 (all) and the %d witnesses, got %d",
			len(c.Witnesses), c.WitnessQuorum))
	}
	return errors.Join(errs...)
}

// quorum is the witness quorum with the default applied.
func (c *IntegrityConfig) quorum() int {
	if c.WitnessQuorum == 0 {
		return len(c.Witnesses)
	}
	return c.WitnessQuorum
}

// interval is the checkpoint interval with the default applied.
func (c *IntegrityConfig) interval() time.Duration {
	if c.CheckpointInterval == 0 {
		return defaultCheckpointInterval
	}
	return c.CheckpointInterval
}

// Validate checks the HTTP sink's own keys.
func (c *HTTPConfig) Validate() error { return validateClient("", &c.ClientConfig) }

// validateClient checks a confighttp client's endpoint (the sink's own
// check, so the config refuses exactly what the sink would) and
// httpsink.ValidateClient's keys, each error naming its key after prefix.
func validateClient(prefix string, cc *confighttp.ClientConfig) error {
	var errs []error
	if err := httpsink.ValidateEndpoint(cc.Endpoint); err != nil {
		errs = append(errs, fmt.Errorf("%sendpoint: %w", prefix, err))
	}
	errs = append(errs, httpsink.ValidateClient(prefix, cc.ProxyURL, cc.Headers.Iter, cc.Timeout))
	errs = append(errs, fsutil.CheckFiles(clientTLSFiles(prefix, &cc.TLS)))
	return errors.Join(errs...)
}

// clientTLSFiles maps a client's TLS file keys, after prefix, to their
// paths.
func clientTLSFiles(prefix string, tls *configtls.ClientConfig) map[string]string {
	return map[string]string{
		prefix + "tls::ca_file": tls.CAFile, prefix + "tls::cert_file": tls.CertFile, prefix + "tls::key_file": tls.KeyFile,
	}
}

// minReplayInterval is the shortest replay_interval taken;
// maxReplayInterval the longest, so that a spool is tried at least
// hourly.
const (
	minReplayInterval = 10 * time.Millisecond
	maxReplayInterval = time.Hour
)

// checkSpoolPath refuses a placeholder, which the spool would take as
// part of a file name, a path naming no file, and what the spool would
// refuse to open at start:
// a directory, a symbolic link or another non-regular file in its place.
// A path that does not exist yet is made at start.
func checkSpoolPath(path string) error {
	if filesink.HasPlaceholder(path) {
		return errors.New("the spool is one file; {session_id} and {session_id_hex} are expanded only in file::path")
	}
	if err := filesink.CheckFileName(path); err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return nil
	case fi.IsDir():
		return fmt.Errorf("%s is a directory; name a file in it", path)
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link, which the spool never opens; name the file itself", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	return nil
}

// Validate checks the spool keys.
func (c *SpoolConfig) Validate() error {
	var errs []error
	if c.Path == "" {
		errs = append(errs, errors.New("path: must be set"))
	} else if err := checkSpoolPath(c.Path); err != nil {
		errs = append(errs, fmt.Errorf("path: %w", err))
	}
	if c.MaxSize < 0 {
		errs = append(errs, fmt.Errorf("max_size: must be >= 0, got %d", c.MaxSize))
	}
	switch {
	case c.ReplayInterval <= 0:
		errs = append(errs, fmt.Errorf("replay_interval: must be > 0, got %s", c.ReplayInterval))
	case c.ReplayInterval < minReplayInterval:
		// The replayer looks at the spool this often even when it is empty.
		errs = append(errs, fmt.Errorf("replay_interval: must be at least %s, got %s", minReplayInterval, c.ReplayInterval))
	case c.ReplayInterval > maxReplayInterval:
		errs = append(errs, fmt.Errorf("replay_interval: must be at most %s, got %s", maxReplayInterval, c.ReplayInterval))
	}
	return errors.Join(errs...)
}
