package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/confignet"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/confmap"

	"github.com/sandboxaudit/sandboxaudit/internal/confcheck"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/pairing"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"
)

const (
	defaultEndpoint       = "localhost:8088"
	defaultTracesPath     = "/v1/traces"
	defaultEventsPath     = "/v1/sandbox/events"
	defaultMaxPending     = 10000
	defaultPendingTimeout = 5 * time.Minute
	defaultDedupeWindow   = 100000
	// maxDedupeWindow bounds the window's table, allocated whole at start
	// (48 to 96 bytes per id).
	maxDedupeWindow = 10_000_000

	// defaultMaxInflightBytes bounds the request bodies held at once.
	defaultMaxInflightBytes = 128 << 20
	// defaultMaxRequestBodySize is confighttp's default, applied when
	// max_request_body_size is 0.
	defaultMaxRequestBodySize = 20 << 20
	// defaultMaxRequestHeaderBytes: audit clients send a few hundred bytes
	// of headers (a bearer token is small); net/http's own 1 MiB let each
	// stalled connection hold about 2.5 MB.
	defaultMaxRequestHeaderBytes = 16 << 10
	// defaultMaxConnections bounds what stalled connections hold together
	// (about 40 KB each, measured, with the header bound).
	defaultMaxConnections = 4096
	// defaultMinBodyRate is far below any working link (20 MiB at it
	// takes 21 minutes): what it cuts is a body that stalls.
	defaultMinBodyRate = 16 << 10
	// Small bodies (any usual event, a small batch) have a budget of their
	// own, so large bodies never make them wait, and must arrive within
	// defaultSmallBodyTimeout (64 KiB at 32 KiB/s).
	defaultSmallBodyBytes         = 64 << 10
	defaultSmallBodyInflightBytes = 16 << 20
	defaultSmallBodyTimeout       = 2 * time.Second

	// Server timeouts: a client that trickles its headers or body, or
	// holds an idle keep-alive connection, is cut off instead of holding a
	// connection (and its buffer) forever. 30s reads a full 20 MiB body at
	// 0.7 MB/s.
	defaultReadHeaderTimeout = 10 * time.Second
	defaultReadTimeout       = 30 * time.Second
	defaultIdleTimeout       = 60 * time.Second

	// minRequestHeaderBytes leaves room for a request line with a long
	// path and the usual headers.
	minRequestHeaderBytes = 1 << 10
	// maxRequestHeaderBytes keeps the bound and what net/http adds to it
	// (4096 bytes, 320 for HTTP/2, whose limit is a uint32) from wrapping
	// to a bound that refuses every request with 431.
	maxRequestHeaderBytes = math.MaxUint32 - 4096

	// minServerTimeout is the shortest read_timeout, read_header_timeout
	// and write_timeout taken (0 aside).
	minServerTimeout = 100 * time.Millisecond

	// defaultShutdownGrace is how long requests in flight get to finish
	// at shutdown before their connections are closed.
	defaultShutdownGrace = 5 * time.Second

	// minSweepInterval keeps a tiny pending_timeout from turning the sweeper
	// into a busy loop.
	minSweepInterval = 10 * time.Millisecond
	// maxSweepInterval and maxPendingTimeout refuse a duration in years,
	// a slip of the unit: starts would wait that long to leave.
	maxSweepInterval  = 24 * time.Hour
	maxPendingTimeout = 7 * 24 * time.Hour
)

// Config is the receiver's configuration.
type Config struct {
	// ServerConfig is the HTTP server: endpoint, TLS, auth, CORS,
	// max_request_body_size, compression, timeouts, as in every collector
	// HTTP receiver.
	ServerConfig confighttp.ServerConfig `mapstructure:",squash"`

	// TracesPath is the URL path of the OTLP/HTTP traces intake.
	TracesPath string `mapstructure:"traces_path"`

	// EventsPath is the URL path of the sandbox event intake.
	EventsPath string `mapstructure:"events_path"`

	// MaxPending bounds the start events waiting for their finish event
	// (used only in a traces pipeline). When it is reached, the oldest start
	// is emitted as an incomplete span.
	MaxPending int `mapstructure:"max_pending"`

	// MaxPendingBytes bounds the same starts by the size of their canonical
	// lines; the oldest is emitted as an incomplete span to make room.
	MaxPendingBytes int64 `mapstructure:"max_pending_bytes"`

	// PendingTimeout is how long a start event waits for its finish before it
	// is emitted as an incomplete span.
	PendingTimeout time.Duration `mapstructure:"pending_timeout"`

	// SweepInterval is how often timed-out starts are emitted. Zero means
	// pending_timeout/10, clamped to [10ms, 1s].
	SweepInterval time.Duration `mapstructure:"sweep_interval"`

	// Dedupe drops events whose event_id was already delivered.
	Dedupe DedupeConfig `mapstructure:"dedupe"`

	// MaxInflightBytes bounds the buffer memory of the request bodies being
	// read or processed at once; past it a request gets 503 with
	// Retry-After. It must exceed max_request_body_size so that one
	// request of the maximum size always fits.
	MaxInflightBytes int64 `mapstructure:"max_inflight_bytes"`

	// MaxRequestHeaderBytes bounds the request line and headers of a
	// request; past it, plus the 4,096 bytes net/http adds to
	// Server.MaxHeaderBytes, the client gets 431.
	MaxRequestHeaderBytes int `mapstructure:"max_request_header_bytes"`

	// MaxConnections bounds the connections open at once, shared between
	// client addresses: at the bound, a connection from an address holding
	// at least two fewer takes the place of an idle one of the address
	// holding the most; any other waits until one closes.
	MaxConnections int `mapstructure:"max_connections"`

	// MinBodyRate is the slowest a large request body may arrive, in bytes
	// per second, measured over every 5 seconds of its life; a slower one
	// gets 408 (0: only read_timeout applies).
	MinBodyRate int64 `mapstructure:"min_body_rate"`

	// SmallBodyBytes is the largest Content-Length of a small body. Small
	// bodies are held in a budget of their own (small_body_inflight_bytes),
	// so they never wait behind large ones (0: every body is large).
	SmallBodyBytes int64 `mapstructure:"small_body_bytes"`

	// SmallBodyInflightBytes bounds the memory of the small bodies being
	// read or processed at once, beside max_inflight_bytes.
	SmallBodyInflightBytes int64 `mapstructure:"small_body_inflight_bytes"`

	// SmallBodyTimeout is the longest a small body may take to arrive; a
	// slower one gets 408 (0: only read_timeout).
	SmallBodyTimeout time.Duration `mapstructure:"small_body_timeout"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Unmarshal decodes conf, then refuses the numbers the decoder would have
// changed quietly (a fraction for an integer, a duration without a unit),
// naming the key.
func (cfg *Config) Unmarshal(conf *confmap.Conf) error { return confcheck.Unmarshal(conf, cfg) }

// DedupeConfig configures duplicate suppression on event_id.
type DedupeConfig struct {
	// Enabled turns duplicate suppression on.
	Enabled bool `mapstructure:"enabled"`

	// Window is how many of the most recently delivered event ids are
	// remembered. The table holds a power of two of 24-byte slots, at least
	// twice Window: 48 to 96 bytes per id, 6 MiB at the default 100,000.
	Window int `mapstructure:"window"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	srv := confighttp.NewDefaultServerConfig()
	// Loopback unless the user says otherwise: audit intake should not be
	// reachable from the network by accident.
	srv.NetAddr.Endpoint = defaultEndpoint
	srv.ReadHeaderTimeout = defaultReadHeaderTimeout
	srv.ReadTimeout = defaultReadTimeout
	ka := confighttp.NewDefaultKeepaliveServerConfig()
	ka.IdleTimeout = defaultIdleTimeout
	srv.Keepalive = configoptional.Some(ka)
	return &Config{
		ServerConfig:           srv,
		MaxInflightBytes:       defaultMaxInflightBytes,
		MaxRequestHeaderBytes:  defaultMaxRequestHeaderBytes,
		MaxConnections:         defaultMaxConnections,
		MinBodyRate:            defaultMinBodyRate,
		SmallBodyBytes:         defaultSmallBodyBytes,
		SmallBodyInflightBytes: defaultSmallBodyInflightBytes,
		SmallBodyTimeout:       defaultSmallBodyTimeout,
		TracesPath:             defaultTracesPath,
		EventsPath:             defaultEventsPath,
		MaxPending:             defaultMaxPending,
		MaxPendingBytes:        pairing.DefaultMaxPendingBytes,
		PendingTimeout:         defaultPendingTimeout,
		Dedupe: DedupeConfig{
			Enabled: true,
			Window:  defaultDedupeWindow,
		},
	}
}

// Validate checks the receiver configuration, naming each bad key.
func (cfg *Config) Validate() error {
	var errs error
	if strings.TrimSpace(cfg.ServerConfig.NetAddr.Endpoint) == "" {
		errs = errors.Join(errs, errors.New("endpoint: must not be empty"))
	} else if err := checkEndpoint(cfg.ServerConfig.NetAddr); err != nil {
		errs = errors.Join(errs, err)
	}
	errs = errors.Join(errs, checkServerTimeout("read_timeout", cfg.ServerConfig.ReadTimeout),
		checkServerTimeout("read_header_timeout", cfg.ServerConfig.ReadHeaderTimeout),
		checkServerTimeout("write_timeout", cfg.ServerConfig.WriteTimeout))
	if tls := cfg.ServerConfig.TLS.Get(); tls != nil {
		errs = errors.Join(errs, fsutil.CheckFiles(tlsFiles(tls)))
	}
	if ka := cfg.ServerConfig.Keepalive.Get(); ka != nil && ka.IdleTimeout < 0 {
		errs = errors.Join(errs, fmt.Errorf("keepalive::idle_timeout: must be >= 0, got %s", ka.IdleTimeout))
	}
	if cfg.ServerConfig.MaxRequestBodySize < 0 {
		errs = errors.Join(errs, fmt.Errorf("max_request_body_size: must not be negative (got %d)", cfg.ServerConfig.MaxRequestBodySize))
	}
	if body := cmp.Or(cfg.ServerConfig.MaxRequestBodySize, defaultMaxRequestBodySize); cfg.MaxInflightBytes <= body {
		errs = errors.Join(errs, fmt.Errorf("max_inflight_bytes: must be greater than max_request_body_size (%d), so that one request of that size fits (got %d)", body, cfg.MaxInflightBytes))
	}
	if cfg.MaxRequestHeaderBytes < minRequestHeaderBytes {
		errs = errors.Join(errs, fmt.Errorf("max_request_header_bytes: must be at least %d (got %d)", minRequestHeaderBytes, cfg.MaxRequestHeaderBytes))
	} else if int64(cfg.MaxRequestHeaderBytes) > maxRequestHeaderBytes {
		errs = errors.Join(errs, fmt.Errorf("max_request_header_bytes: must be at most %d (got %d)", int64(maxRequestHeaderBytes), cfg.MaxRequestHeaderBytes))
	}
	if cfg.MinBodyRate < 0 {
		errs = errors.Join(errs, fmt.Errorf("min_body_rate: must not be negative (got %d)", cfg.MinBodyRate))
	}
	errs = errors.Join(errs, cfg.validateSmallBodies())
	errs = errors.Join(errs, checkCodings(cfg.ServerConfig.CompressionAlgorithms))
	if cfg.MaxConnections <= 0 {
		errs = errors.Join(errs, fmt.Errorf("max_connections: must be positive (got %d)", cfg.MaxConnections))
	}
	errs = errors.Join(errs, validatePath("traces_path", cfg.TracesPath), validatePath("events_path", cfg.EventsPath))
	if cfg.TracesPath != "" && cfg.TracesPath == cfg.EventsPath {
		errs = errors.Join(errs, fmt.Errorf("events_path: must differ from traces_path (both %q)", cfg.EventsPath))
	}
	if cfg.MaxPending <= 0 {
		errs = errors.Join(errs, fmt.Errorf("max_pending: must be positive (got %d)", cfg.MaxPending))
	}
	if cfg.MaxPendingBytes <= 0 {
		errs = errors.Join(errs, fmt.Errorf("max_pending_bytes: must be positive (got %d)", cfg.MaxPendingBytes))
	}
	if cfg.PendingTimeout <= 0 || cfg.PendingTimeout > maxPendingTimeout {
		errs = errors.Join(errs, fmt.Errorf("pending_timeout: must be positive and at most %s (got %s)", maxPendingTimeout, cfg.PendingTimeout))
	}
	if cfg.SweepInterval < 0 || cfg.SweepInterval > maxSweepInterval {
		errs = errors.Join(errs, fmt.Errorf("sweep_interval: must be between 0 and %s (got %s)", maxSweepInterval, cfg.SweepInterval))
	}
	if cfg.Dedupe.Window < 0 {
		// Refused with dedupe off too: turning it on would start from a
		// value that was never checked.
		errs = errors.Join(errs, fmt.Errorf("dedupe::window: must not be negative (got %d)", cfg.Dedupe.Window))
	} else if cfg.Dedupe.Enabled && cfg.Dedupe.Window == 0 {
		errs = errors.Join(errs, fmt.Errorf("dedupe::window: must be positive when dedupe is enabled (got %d)", cfg.Dedupe.Window))
	}
	if cfg.Dedupe.Enabled && cfg.Dedupe.Window > maxDedupeWindow {
		errs = errors.Join(errs, fmt.Errorf("dedupe::window: must be at most %d, whose table takes up to 960 MB (got %d)", maxDedupeWindow, cfg.Dedupe.Window))
	}
	return errs
}

// checkCodings refuses a compression_algorithms entry confighttp has no
// decoder for: it takes the name with a nil decoder, and each request
// that names it panics the handler, leaving the client without an answer.
func checkCodings(algs []string) error {
	// The Content-Encoding names confighttp decodes ("" and identity: none).
	knownCodings := []string{"", "identity", "gzip", "zstd", "zlib", "deflate", "snappy", "lz4", "x-snappy-framed"}
	var errs []error
	for i, alg := range algs {
		if !slices.Contains(knownCodings, alg) {
			errs = append(errs, fmt.Errorf("compression_algorithms::%d: %q is not a coding the server decodes (%q)", i, alg, knownCodings[1:]))
		}
	}
	return errors.Join(errs...)
}

// checkServerTimeout refuses a negative server timeout, and one so short
// that it cuts every client rather than a stalled one: with write_timeout:
// 1ms each event was written and its client got no answer, and retried.
func checkServerTimeout(key string, d time.Duration) error {
	switch {
	case d < 0:
		return fmt.Errorf("%s: must be >= 0, got %s", key, d)
	case d > 0 && d < minServerTimeout:
		return fmt.Errorf("%s: must be 0 or at least %s, got %s", key, minServerTimeout, d)
	}
	return nil
}

// validateSmallBodies checks the keys of the small-body class.
func (cfg *Config) validateSmallBodies() error {
	var errs error
	if cfg.SmallBodyBytes < 0 {
		errs = errors.Join(errs, fmt.Errorf("small_body_bytes: must not be negative (got %d)", cfg.SmallBodyBytes))
	}
	if cfg.SmallBodyBytes > 0 && cfg.SmallBodyInflightBytes <= cfg.SmallBodyBytes {
		errs = errors.Join(errs, fmt.Errorf("small_body_inflight_bytes: must be greater than small_body_bytes (%d), so that one small body fits (got %d)", cfg.SmallBodyBytes, cfg.SmallBodyInflightBytes))
	}
	if cfg.SmallBodyTimeout < 0 {
		errs = errors.Join(errs, fmt.Errorf("small_body_timeout: must be >= 0, got %s", cfg.SmallBodyTimeout))
	}
	return errs
}

// validatePath accepts clean absolute URL paths only, so the path a user
// writes is exactly the path that is served.
func validatePath(key, p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%s: must not be empty", key)
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("%s: must start with \"/\" (got %q)", key, p)
	case strings.ContainsAny(p, "?# \t\r\n{}%"):
		// The server unescapes a request's path before it matches: "%41"
		// is served as "A", and an invalid escape is never reached.
		return fmt.Errorf("%s: must be a plain URL path without query, fragment, spaces, braces or percent escapes (got %q)", key, p)
	case path.Clean(p) != p:
		return fmt.Errorf("%s: must be a clean path (got %q, want %q)", key, p, path.Clean(p))
	}
	return nil
}

// maxBodySize is max_request_body_size as confighttp applies it.
func (cfg *Config) maxBodySize() int64 {
	return cmp.Or(cfg.ServerConfig.MaxRequestBodySize, defaultMaxRequestBodySize)
}

// answerBy is how long after its headers a request must be done with, its
// body read and its events delivered, for its answer to be written before
// write_timeout: a tenth of it, at most 1s, is left to write (0: no bound).
func (cfg *Config) answerBy() time.Duration {
	wt := cfg.ServerConfig.WriteTimeout
	if wt <= 0 {
		return 0
	}
	return wt - min(wt/10, time.Second)
}

// snappyEnabled tells whether compression_algorithms takes snappy.
func (cfg *Config) snappyEnabled() bool { return cfg.decodes(admission.EncodingSnappy) }

// decodes tells whether compression_algorithms takes the coding enc, as
// confighttp reads it: unset means its default list, which takes every
// coding it knows.
func (cfg *Config) decodes(enc string) bool {
	algs := cfg.ServerConfig.CompressionAlgorithms
	return algs == nil || slices.Contains(algs, enc)
}

// sweepInterval is how often the pairing table is swept.
func (cfg *Config) sweepInterval() time.Duration {
	if cfg.SweepInterval > 0 {
		return max(cfg.SweepInterval, minSweepInterval)
	}
	return min(max(cfg.PendingTimeout/10, minSweepInterval), time.Second)
}

// tlsFiles maps each TLS file key to its path.
func tlsFiles(tls *configtls.ServerConfig) map[string]string {
	return map[string]string{
		"tls::ca_file": tls.CAFile, "tls::cert_file": tls.CertFile, "tls::key_file": tls.KeyFile, "tls::client_ca_file": tls.ClientCAFile,
	}
}

// checkEndpoint refuses a TCP endpoint that no listen could take (without
// a port, a URL, a port out of range) and port 0, a random port no
// client knows.
func checkEndpoint(addr confignet.AddrConfig) error {
	switch addr.Transport {
	case "", confignet.TransportTypeTCP, confignet.TransportTypeTCP4, confignet.TransportTypeTCP6:
	default:
		return nil
	}
	_, port, err := net.SplitHostPort(addr.Endpoint)
	if err == nil {
		if n, convErr := strconv.Atoi(port); convErr == nil && (n < 0 || n > 65535) {
			err = fmt.Errorf("port %s is out of range", port)
		} else if convErr == nil && n == 0 {
			return fmt.Errorf("endpoint: port 0 would listen on a random port no client knows; give a port, such as 127.0.0.1:8088 (got %q)", addr.Endpoint)
		}
	}
	if err != nil {
		return fmt.Errorf("endpoint: must be host:port, such as 127.0.0.1:8088 (got %q)", addr.Endpoint)
	}
	return nil
}
