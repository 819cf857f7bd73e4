// Package httpsink delivers canonical JSONL audit lines to an HTTP endpoint.
//
// Lines arrive already policy-applied and encoded; the package works on bytes
// only. Delivery is at-least-once. What a failed POST means for its lines:
//
//   - 429, 5xx, an unfollowed 3xx or a network error: without a spool,
//     retried with exponential backoff (honouring Retry-After) until the
//     retries are exhausted. With a spool, the request and the rest of
//     the Send go to the spool at once, and a background replayer sends
//     them, in order: at once, then with backoff while the endpoint
//     stays down. A caller is never held through a live backoff only to
//     have its lines spooled when its deadline ends.
//   - A 4xx that says the endpoint refuses us whatever we send (expired
//     token, missing permission, wrong path, misrouted proxy, http:// to
//     a TLS port, a Content-Type, Content-Encoding or headers it does not
//     take; classify lists the codes). The lines are not at fault: they are spooled at
//     once (no live retries), the replayer keeps them and backs off as for
//     a 5xx, and each refused attempt is logged at ERROR with the status.
//     Without a spool they are handed back to the caller. They are never
//     dropped, so an expired token cannot wipe a spool.
//   - Any other 4xx (400, 409, 413, 422, …): the endpoint refuses
//     the content, which would fail forever; those lines are dropped
//     visibly (error, ERROR log, Observer.Dropped with ReasonHTTP4xx), live
//     and on replay, so they cannot block the spool behind them.
//
// Logs and errors name the endpoint without userinfo or query, the status
// and the length of the response; never request headers, tokens, request
// bodies or response bodies (see Settings.ShowResponseBody).
package httpsink

import (
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/configretry"
	"go.uber.org/zap"
	"golang.org/x/net/http/httpguts"

	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// Format is the request shape.
type Format string

const (
	// FormatEvent sends one POST per event; the body is the canonical event
	// JSON without its trailing newline, Content-Type application/json (what
	// the Python HttpProxySink sends).
	FormatEvent Format = "event"
	// FormatNDJSON sends one POST per batch; the body is the canonical lines
	// (each with its newline), Content-Type application/x-ndjson.
	FormatNDJSON Format = "ndjson"
)

// Defaults applied when the corresponding Settings field is zero.
const (
	DefaultReplayInterval = 5 * time.Second
	DefaultMaxBatchLines  = 1000
	DefaultMaxBatchBytes  = 4 << 20
	// DefaultClientTimeout is the timeout of the client built when
	// Settings.Client is nil (the exporter always passes its own).
	DefaultClientTimeout = 30 * time.Second
)

// Validate reports whether f is a known format.
func (f Format) Validate() error {
	switch f {
	case FormatEvent, FormatNDJSON:
		return nil
	}
	return fmt.Errorf("format %q is not one of %q, %q", string(f), FormatEvent, FormatNDJSON)
}

// Settings configures a Sink. The exporter owns the YAML configuration and
// turns it into these settings.
type Settings struct {
	// Client sends the requests. The exporter builds it with
	// confighttp.ClientConfig.ToClient, which brings headers, TLS, auth,
	// compression and the request timeout. nil: a plain client with
	// DefaultClientTimeout.
	Client *http.Client
	// Endpoint is the absolute http(s) URL every POST goes to.
	Endpoint string
	// Format is FormatEvent or FormatNDJSON.
	Format Format
	// Retry is the backoff for live delivery without a spool; Enabled
	// false means one attempt per request. With a spool there are no live
	// retries, and Retry.MaxInterval caps the replayer's pause.
	Retry configretry.BackOffConfig
	// Spool receives lines that could not be delivered; nil means no
	// spool: undelivered lines are handed back to the caller as a
	// retryable error. The Sink owns the spool and closes it on Shutdown.
	Spool *spool.Spool
	// ReplayInterval is the pause between replay rounds while the spool
	// holds lines (and the first backoff step after a failed round).
	// 0 means DefaultReplayInterval.
	ReplayInterval time.Duration
	// MaxBatchLines and MaxBatchBytes bound one ndjson request, live and
	// replayed (a single line larger than MaxBatchBytes still goes alone).
	// 0 means the defaults.
	MaxBatchLines int
	MaxBatchBytes int
	// ReplayRequestTimeout bounds one replayed request when Client has no
	// timeout of its own (http.timeout: 0): one endpoint that stalls would
	// otherwise hold every spooled line behind it until a restart. 0 means
	// DefaultClientTimeout.
	ReplayRequestTimeout time.Duration
	// Logger may be nil (no logging). Headers, tokens, request bodies and
	// response bodies are never logged (only a response's length), unless
	// ShowResponseBody is set.
	Logger *zap.Logger
	// ShowResponseBody puts the start of an error response's body into
	// errors and logs, a debugging aid: an endpoint may echo the request's
	// headers, so every value of RedactValues (the configured header
	// values), every header value the request carried on the wire (what
	// an auth round tripper added included), each of their
	// space-separated parts, and the endpoint URL's password and query
	// values are replaced by [REDACTED] first.
	ShowResponseBody bool
	// RedactValues are values never to show (the configured header
	// values, a proxy's credentials): redacted from shown bodies, and a
	// transport error that echoes one is withheld, bodies shown or not.
	RedactValues []string
	// Observer receives the delivery counters; nil means NopObserver.
	Observer Observer
}

func (s Settings) withDefaults() (Settings, error) {
	if err := s.Format.Validate(); err != nil {
		return s, err
	}
	if err := ValidateEndpoint(s.Endpoint); err != nil {
		return s, fmt.Errorf("endpoint: %w", err)
	}
	if s.Client == nil {
		s.Client = &http.Client{Timeout: DefaultClientTimeout}
	}
	if s.ReplayInterval < 0 || s.MaxBatchLines < 0 || s.MaxBatchBytes < 0 || s.ReplayRequestTimeout < 0 {
		return s, errors.New("replay interval, replay request timeout and batch limits must be >= 0")
	}
	if s.ReplayRequestTimeout == 0 {
		s.ReplayRequestTimeout = DefaultClientTimeout
	}
	if s.ReplayInterval == 0 {
		s.ReplayInterval = DefaultReplayInterval
	}
	if s.MaxBatchLines == 0 {
		s.MaxBatchLines = DefaultMaxBatchLines
	}
	if s.MaxBatchBytes == 0 {
		s.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if s.Format == FormatEvent {
		// One event per request, whatever the batch limits say.
		s.MaxBatchLines = 1
	}
	if s.Logger == nil {
		s.Logger = zap.NewNop()
	}
	if s.Observer == nil {
		s.Observer = NopObserver{}
	}
	return s, nil
}

// ValidateEndpoint reports whether endpoint is an absolute http:// or
// https:// URL with a host, the only thing a Sink can POST to. The error
// does not name the key (the caller does) and never repeats the URL's
// userinfo or query, which may carry credentials.
func ValidateEndpoint(endpoint string) error {
	if endpoint == "" {
		return errors.New("must be set")
	}
	u, err := url.Parse(endpoint)
	if err != nil && strings.ContainsAny(endpoint, "@?") {
		// The cause can quote part of a password or a query value
		// (`invalid port ":SEC"`).
		return errors.New("not a valid URL (the cause is not shown: it could quote a password or a query value)")
	}
	if err != nil {
		// *url.Error repeats the whole URL; keep only the cause.
		return fmt.Errorf("not a valid URL: %w", errors.Unwrap(err))
	}
	if u.Host == "" {
		// Without "scheme://" a user is taken for the scheme, or the
		// userinfo is path text ("TOKEN@host/v1"), and a token is often
		// the user.
		return errors.New("must be an absolute http:// or https:// URL (the value has no host and is not shown: it could hold a credential)")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("must be an absolute http:// or https:// URL, got %q", safeURL(u))
	}
	if u.Hostname() == "" {
		// "http://:8080" (an unset ${env:HOST}) would dial this machine.
		return fmt.Errorf("%q has no host name", safeURL(u))
	}
	return checkPort(u)
}

// checkPort refuses a port no connection can reach: url.Parse takes any
// digits, and each request would then fail with "invalid port". The
// port is only digits, so showing it shows no secret.
func checkPort(u *url.URL) error {
	p := u.Port()
	if p == "" {
		return nil
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %s is out of range (1 to 65535)", p)
	}
	return nil
}

// ValidateClient checks what confighttp accepts but every request would
// fail on, or what its own error would print whole: the proxy URL (its
// parse error repeats the URL, password included), header names and values
// (a newline makes each request fail; the value is never shown), and a
// negative timeout (no per-request bound at all). Each error names its key
// after prefix, the path of the client's section.
func ValidateClient[V ~string](prefix, proxyURL string, headers iter.Seq2[string, V], timeout time.Duration) error {
	var errs []error
	if proxyURL != "" {
		// confighttp's own parse; its cause can quote part of the
		// userinfo (`invalid port ":pa"`), so none is given.
		if u, err := url.ParseRequestURI(proxyURL); err != nil {
			errs = append(errs, errors.New(prefix+"proxy_url: not a valid absolute URL"))
		} else if !slices.Contains([]string{"http", "https", "socks5", "socks5h"}, u.Scheme) || u.Hostname() == "" {
			// "user:pw@host:port" parses, with "user" as its scheme.
			errs = append(errs, errors.New(prefix+"proxy_url: must be an http://, https://, socks5:// or socks5h:// URL with a host"))
		} else if err := checkPort(u); err != nil {
			errs = append(errs, fmt.Errorf("%sproxy_url: %w", prefix, err))
		}
	}
	for name, value := range headers {
		if err := CheckHeader(name, string(value)); err != nil {
			errs = append(errs, fmt.Errorf("%sheaders: %w", prefix, err))
		}
	}
	if timeout < 0 {
		errs = append(errs, fmt.Errorf("%stimeout: must be >= 0, got %s", prefix, timeout))
	}
	return errors.Join(errs...)
}

// CheckHeader refuses a header no request can carry, showing the value
// never and the name only up to its first bad character.
func CheckHeader(name, value string) error {
	switch {
	case !httpguts.ValidHeaderFieldName(name):
		return errors.New(badHeaderName(name))
	case !httpguts.ValidHeaderFieldValue(value):
		return fmt.Errorf("%s: the value holds a character a header cannot carry (a newline or a control)", name)
	case describesBody(name):
		// A configured header replaces the request's own: the endpoint
		// would refuse every request (415), or drop the lines as refused
		// content (400).
		return fmt.Errorf("%s: set by the sink for each request, from format and compression; a value here would contradict the body", name)
	}
	return nil
}

// describesBody reports whether the header name describes the body the
// sink sends, so that only the sink sets it.
func describesBody(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Content-Type", "Content-Encoding", "Content-Length", "Transfer-Encoding":
		return true
	}
	return false
}

// badHeaderName says why name is not a header name, showing only the token
// before its first bad character: a name such as "Authorization: Bearer
// …" holds a value, which is never shown.
func badHeaderName(name string) string {
	end := 0
	for end < len(name) && end < 64 && httpguts.IsTokenRune(rune(name[end])) {
		end++
	}
	if end == 0 {
		return "a header name is empty or starts with a character a name cannot carry (the rest is not shown)"
	}
	return fmt.Sprintf("the header name %q is followed by a character a name cannot carry (the rest is not shown)", name[:end])
}

// safeURL renders u for logs and errors: scheme, host and path only. The
// userinfo and the query can carry credentials (?api_key=…), so both go.
func safeURL(u *url.URL) string {
	c := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return c.String()
}
