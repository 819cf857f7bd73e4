// Command example records a few fake sandbox operations with sandboxtrace
// and sends them over OTLP/HTTP to a collector (localhost:4318 by default):
// each operation's start event first, as a log record (write-ahead, see
// sandboxtrace/README.md, "Delivery modes"), then its span. It prints the
// session id and trace id before the first operation, and exits non-zero
// when anything could not be exported.
//
//	go run ./example -endpoint localhost:4318 -capture-output
//	go run ./example -delivery sync -exec-sleep 30s -exit-code 3
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

const defaultEndpoint = "localhost:4318"

type config struct {
	// endpoint is host:port or an http(s) URL; "" means the standard
	// OTEL_EXPORTER_OTLP_*ENDPOINT variables, else defaultEndpoint.
	endpoint string
	// insecure is nil unless -insecure was given.
	insecure      *bool
	sessionID     uuid.UUID
	captureOutput bool
	timeout       time.Duration
	delivery      sandboxtrace.Delivery
	syncTimeout   time.Duration
	// execSleep > 0 makes the first exec print "exec running" and sleep.
	execSleep time.Duration
	exitCode  int
	// directLogs sends the start and finish records with
	// sandboxtrace.DirectLogExporter instead of otlploghttp.
	directLogs bool
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(2)
	}
	if err := run(context.Background(), cfg, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, output io.Writer) (config, error) {
	fs := flag.NewFlagSet("example", flag.ContinueOnError)
	fs.SetOutput(output)
	var cfg config
	var session string
	var insecure optionalBool
	fs.Var(&insecure, "insecure", "plain HTTP instead of TLS (default: true for a loopback host:port endpoint, false otherwise)")
	fs.StringVar(&cfg.endpoint, "endpoint", "", "OTLP/HTTP endpoint, host:port or http(s) URL (default: OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, else "+defaultEndpoint+")")
	fs.StringVar(&session, "session", "", "session id (UUID, not the nil UUID); random when empty")
	fs.BoolVar(&cfg.captureOutput, "capture-output", false, "record exec stdout/stderr on the spans")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "export deadline, retries included")
	delivery := fs.String("delivery", "best_effort", "event delivery: best_effort (queued), sync (the start acknowledged before each operation runs; fail closed) or sync_finish (the finish acknowledged too before it returns)")
	fs.DurationVar(&cfg.syncTimeout, "sync-timeout", sandboxtrace.DefaultSyncTimeout, "how long -delivery sync waits for each acknowledgement")
	fs.DurationVar(&cfg.execSleep, "exec-sleep", 0, "the first exec prints \"exec running\" and sleeps this long")
	fs.IntVar(&cfg.exitCode, "exit-code", 0, "exit code the first exec reports")
	fs.BoolVar(&cfg.directLogs, "direct-logs", false, "send the log records with sandboxtrace.DirectLogExporter (no retries) instead of otlploghttp")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	d, err := sandboxtrace.ParseDelivery(*delivery)
	if err != nil {
		return config{}, fmt.Errorf("-delivery: %w", err)
	}
	cfg.delivery = d
	if cfg.execSleep < 0 || cfg.syncTimeout <= 0 {
		return config{}, fmt.Errorf("-exec-sleep must be >= 0 and -sync-timeout > 0, got %v and %v", cfg.execSleep, cfg.syncTimeout)
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if insecure.set {
		cfg.insecure = &insecure.value
	}
	if session != "" {
		id, err := auditevent.ParseUUID(session)
		if err != nil {
			return config{}, fmt.Errorf("-session %q: %w", session, err)
		}
		if id == uuid.Nil {
			// sandboxtrace.WithSessionID reads the nil UUID as "not set"
			// and would record a random id instead.
			return config{}, fmt.Errorf("-session %q: the nil UUID cannot be a session id here; leave -session empty for a random one", session)
		}
		cfg.sessionID = id
	}
	if cfg.timeout <= 0 {
		return config{}, fmt.Errorf("-timeout must be positive, got %v", cfg.timeout)
	}
	return cfg, nil
}

// optionalBool is a boolean flag that knows whether it was given, so the
// loopback default applies only when it was not.
type optionalBool struct{ set, value bool }

func (b *optionalBool) IsBoolFlag() bool { return true }

func (b *optionalBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.value)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.set, b.value = true, v
	return nil
}

// endpoint is where the exporters send, resolved from the flags.
type endpoint struct {
	// fromEnv: the exporters read the standard OTEL_EXPORTER_OTLP_*
	// variables themselves.
	fromEnv  bool
	url      *url.URL // an http(s) URL -endpoint
	hostPort string   // a host:port -endpoint
	insecure bool
}

// resolveEndpoint checks the endpoint settings. An explicit -insecure always
// wins over the loopback default; with a URL the scheme decides and a
// contradicting -insecure is an error.
func resolveEndpoint(cfg config, getenv func(string) string) (endpoint, error) {
	ep := endpoint{hostPort: cfg.endpoint}
	if ep.hostPort == "" {
		if getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" {
			ep.fromEnv = true
			ep.insecure = cfg.insecure != nil && *cfg.insecure
			return ep, nil
		}
		ep.hostPort = defaultEndpoint
	}
	if strings.Contains(ep.hostPort, "://") {
		u, err := url.Parse(ep.hostPort)
		if err != nil {
			return endpoint{}, fmt.Errorf("-endpoint %q: %w", ep.hostPort, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return endpoint{}, fmt.Errorf("-endpoint %q: want an http or https URL with a host", ep.hostPort)
		}
		if cfg.insecure != nil && *cfg.insecure != (u.Scheme == "http") {
			return endpoint{}, fmt.Errorf("-insecure=%v contradicts the %s scheme of -endpoint", *cfg.insecure, u.Scheme)
		}
		return endpoint{url: u}, nil
	}
	host, _, err := net.SplitHostPort(ep.hostPort)
	if err != nil {
		return endpoint{}, fmt.Errorf("-endpoint %q: want host:port or a URL: %w", ep.hostPort, err)
	}
	ep.insecure = isLoopback(host)
	if cfg.insecure != nil {
		ep.insecure = *cfg.insecure
	}
	return ep, nil
}

// signalURL is the URL of one signal's OTLP path: the collector's default
// (/v1/traces, /v1/logs) when the URL has no path; a URL ending in
// /v1/traces gives its logs path beside it.
func (ep endpoint) signalURL(signal string) string {
	u := *ep.url
	switch p := strings.TrimSuffix(u.Path, "/"); {
	case p == "":
		u.Path = "/v1/" + signal
	case signal != "traces":
		u.Path = strings.TrimSuffix(p, "/v1/traces") + "/v1/" + signal
	}
	return u.String()
}

// exporterOptions turns the endpoint settings into span exporter options.
func exporterOptions(cfg config, getenv func(string) string) ([]otlptracehttp.Option, error) {
	ep, err := resolveEndpoint(cfg, getenv)
	if err != nil {
		return nil, err
	}
	var opts []otlptracehttp.Option
	switch {
	case ep.url != nil:
		return []otlptracehttp.Option{otlptracehttp.WithEndpointURL(ep.signalURL("traces"))}, nil
	case !ep.fromEnv:
		opts = append(opts, otlptracehttp.WithEndpoint(ep.hostPort))
	}
	if ep.insecure {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	return opts, nil
}

// logExporterOptions is exporterOptions for the start-event log exporter.
func logExporterOptions(cfg config, getenv func(string) string) ([]otlploghttp.Option, error) {
	ep, err := resolveEndpoint(cfg, getenv)
	if err != nil {
		return nil, err
	}
	var opts []otlploghttp.Option
	switch {
	case ep.url != nil:
		return []otlploghttp.Option{otlploghttp.WithEndpointURL(ep.signalURL("logs"))}, nil
	case !ep.fromEnv:
		opts = append(opts, otlploghttp.WithEndpoint(ep.hostPort))
	}
	if ep.insecure {
		opts = append(opts, otlploghttp.WithInsecure())
	}
	return opts, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// run exports the fake session and reports whether every span and start
// event got through.
func run(ctx context.Context, cfg config, getenv func(string) string, out io.Writer) error {
	spanExp, err := newSpanExporter(ctx, cfg, getenv)
	if err != nil {
		return err
	}
	logExp, err := newLogExporter(ctx, cfg, getenv)
	if err != nil {
		return err
	}
	rec := &errRecorder{SpanExporter: spanExp}
	logRec := &logErrRecorder{Exporter: logExp}
	tp := sdktrace.NewTracerProvider(
		// Blocks instead of dropping when its queue is full.
		// -timeout bounds each export, the retries of a refused or cut
		// connection included.
		sdktrace.WithSpanProcessor(sandboxtrace.NewSpanProcessor(rec, sdktrace.WithExportTimeout(cfg.timeout))),
		// An audit trail wants every span.
		sdktrace.WithSampler(sdktrace.AlwaysSample()))

	simErr := simulate(ctx, tp, cfg, logRec, out)
	// Shutdown flushes the batches; a failed batch is only visible through
	// the recorders, since the processors hand export errors to the global
	// error handler.
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.timeout+5*time.Second)
	defer cancel()
	shutdownErr := tp.Shutdown(shutdownCtx)
	if err := errors.Join(simErr, rec.err(), logRec.err(), shutdownErr); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(out, "exported %d spans\n", rec.exported())
	return nil
}

func retryConfig(timeout time.Duration) (initial, maxInterval, maxElapsed time.Duration) {
	return 200 * time.Millisecond, 2 * time.Second, timeout
}

func newSpanExporter(ctx context.Context, cfg config, getenv func(string) string) (sdktrace.SpanExporter, error) {
	opts, err := exporterOptions(cfg, getenv)
	if err != nil {
		return nil, err
	}
	initial, maxInterval, maxElapsed := retryConfig(cfg.timeout)
	opts = append(opts, otlptracehttp.WithTimeout(cfg.timeout), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{
		Enabled: true, InitialInterval: initial, MaxInterval: maxInterval, MaxElapsedTime: maxElapsed,
	}))
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("create OTLP/HTTP span exporter: %w", err)
	}
	return exp, nil
}

func newLogExporter(ctx context.Context, cfg config, getenv func(string) string) (sdklog.Exporter, error) {
	if cfg.directLogs {
		return newDirectLogExporter(cfg, getenv)
	}
	opts, err := logExporterOptions(cfg, getenv)
	if err != nil {
		return nil, err
	}
	initial, maxInterval, maxElapsed := retryConfig(cfg.timeout)
	opts = append(opts, otlploghttp.WithTimeout(cfg.timeout), otlploghttp.WithRetry(otlploghttp.RetryConfig{
		Enabled: true, InitialInterval: initial, MaxInterval: maxInterval, MaxElapsedTime: maxElapsed,
	}))
	exp, err := otlploghttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("create OTLP/HTTP log exporter: %w", err)
	}
	return exp, nil
}

// newDirectLogExporter is a sandboxtrace.DirectLogExporter to the
// endpoint's /v1/logs; it needs -endpoint.
func newDirectLogExporter(cfg config, getenv func(string) string) (sdklog.Exporter, error) {
	ep, err := resolveEndpoint(cfg, getenv)
	if err != nil {
		return nil, err
	}
	var logsURL string
	switch {
	case ep.url != nil:
		logsURL = ep.signalURL("logs")
	case ep.fromEnv:
		return nil, errors.New("-direct-logs needs -endpoint")
	case ep.insecure:
		logsURL = "http://" + ep.hostPort + "/v1/logs"
	default:
		logsURL = "https://" + ep.hostPort + "/v1/logs"
	}
	exp, err := sandboxtrace.NewDirectLogExporter(logsURL)
	if err != nil {
		return nil, fmt.Errorf("-direct-logs: %w", err)
	}
	return exp, nil
}

// simulate runs a fake sandbox session: start, exec (with output; it may
// sleep and report -exit-code), write, read, a failing exec, stop. It
// prints the session's ids before the first operation.
func simulate(ctx context.Context, tp trace.TracerProvider, cfg config, logs sdklog.Exporter, out io.Writer) (err error) {
	opts := []sandboxtrace.Option{sandboxtrace.WithSessionID(cfg.sessionID), sandboxtrace.WithBackend("fake")}
	if cfg.captureOutput {
		opts = append(opts, sandboxtrace.WithOutputCapture(0))
	}
	if logs != nil {
		opts = append(opts, sandboxtrace.WithLogExporter(logs),
			sandboxtrace.WithDelivery(cfg.delivery), sandboxtrace.WithSyncTimeout(cfg.syncTimeout))
	}
	s, err := sandboxtrace.NewSession(ctx, tp, opts...)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(out, "session_id=%s\ntrace_id=%s\n", s.ID(), s.TraceID())
	defer func() {
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.timeout+5*time.Second)
		defer cancel()
		err = errors.Join(err, s.Shutdown(shutdownCtx))
	}()

	nothing := func(context.Context) error { return nil }
	if err := s.StartSandbox(ctx, nothing); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	_, err = s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"echo", "hello"}, Timeout: sandboxtrace.Timeout(30 * time.Second), Shell: true},
		func(ctx context.Context) (sandboxtrace.ExecResult, error) {
			if cfg.execSleep > 0 {
				_, _ = fmt.Fprintln(out, "exec running")
				select {
				case <-time.After(cfg.execSleep):
				case <-ctx.Done():
					return sandboxtrace.ExecResult{}, sandboxtrace.ExecTimeout(ctx.Err())
				}
			}
			return sandboxtrace.ExecResult{ExitCode: cfg.exitCode, Stdout: []byte("hello\n"), Stderr: []byte{}}, nil
		})
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	note := []byte("hello world\n")
	agent := sandboxtrace.User("agent")
	if err := s.Write(ctx, "/workspace/notes.txt", agent, int64(len(note)), nothing); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := s.Read(ctx, "/workspace/notes.txt", agent, nothing); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	// A non-zero exit is ok=false with null error fields, as in the Python
	// session; it is not an error of the call.
	res, err := s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"ls", "/nope"}, Shell: true},
		func(context.Context) (sandboxtrace.ExecResult, error) {
			return sandboxtrace.ExecResult{ExitCode: 2, Stderr: []byte("ls: cannot access '/nope': No such file or directory\n")}, nil
		})
	if err != nil || res.ExitCode != 2 {
		return fmt.Errorf("failing exec: want exit code 2 and no error, got %d, %v", res.ExitCode, err)
	}
	if err := s.Stop(ctx, nothing); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	return nil
}

// errRecorder remembers export failures that the batch processor would
// otherwise only pass to the global error handler. NewSpanProcessor sends a
// batch again after a refused or cut connection, so a failure counts only
// while no later attempt of the same batch (by its first span) succeeded.
type errRecorder struct {
	sdktrace.SpanExporter
	mu      sync.Mutex
	pending map[sdktrace.ReadOnlySpan]error
	count   int
}

func (r *errRecorder) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := r.SpanExporter.ExportSpans(ctx, spans)
	if len(spans) == 0 {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if r.pending == nil {
			r.pending = map[sdktrace.ReadOnlySpan]error{}
		}
		r.pending[spans[0]] = fmt.Errorf("export %d spans: %w", len(spans), err)
	} else {
		delete(r.pending, spans[0])
		r.count += len(spans)
	}
	return err
}

func (r *errRecorder) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	errs := make([]error, 0, len(r.pending))
	for _, err := range r.pending {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (r *errRecorder) exported() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// logErrRecorder remembers start-event export failures (best-effort
// delivery reports them only to the error handler).
type logErrRecorder struct {
	sdklog.Exporter
	mu   sync.Mutex
	errs []error
}

func (r *logErrRecorder) Export(ctx context.Context, records []sdklog.Record) error {
	err := r.Exporter.Export(ctx, records)
	if err != nil {
		r.mu.Lock()
		r.errs = append(r.errs, fmt.Errorf("export %d start events: %w", len(records), err))
		r.mu.Unlock()
	}
	return err
}

func (r *logErrRecorder) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.errs...)
}
