// Command example records a few fake sandbox operations with sandboxtrace
// and sends the spans over OTLP/HTTP to a collector (localhost:4318 by
// default). It prints the session id and trace id, and exits non-zero when
// the spans could not be exported.
//
//	go run ./example -endpoint localhost:4318 -capture-output
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
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
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
	fs.StringVar(&session, "session", "", "session id (UUID); random when empty")
	fs.BoolVar(&cfg.captureOutput, "capture-output", false, "record exec stdout/stderr on the spans")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "export deadline, retries included")
	if err := fs.Parse(args); err != nil {
		return config{}, err
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

// exporterOptions turns the endpoint settings into exporter options. An
// explicit -insecure always wins over the loopback default; with a URL the
// scheme decides and a contradicting -insecure is an error.
func exporterOptions(cfg config, getenv func(string) string) ([]otlptracehttp.Option, error) {
	endpoint := cfg.endpoint
	if endpoint == "" {
		if getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" {
			// The exporter reads the standard variables itself.
			if cfg.insecure != nil && *cfg.insecure {
				return []otlptracehttp.Option{otlptracehttp.WithInsecure()}, nil
			}
			return nil, nil
		}
		endpoint = defaultEndpoint
	}
	if strings.Contains(endpoint, "://") {
		u, err := url.Parse(endpoint)
		if err != nil {
			return nil, fmt.Errorf("-endpoint %q: %w", endpoint, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("-endpoint %q: want an http or https URL with a host", endpoint)
		}
		if cfg.insecure != nil && *cfg.insecure != (u.Scheme == "http") {
			return nil, fmt.Errorf("-insecure=%v contradicts the %s scheme of -endpoint", *cfg.insecure, u.Scheme)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces" // the collector's OTLP/HTTP traces path
		}
		return []otlptracehttp.Option{otlptracehttp.WithEndpointURL(u.String())}, nil
	}
	host, _, err := net.SplitHostPort(endpoint)
	if err != nil {
		return nil, fmt.Errorf("-endpoint %q: want host:port or a URL: %w", endpoint, err)
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(endpoint)}
	insecure := isLoopback(host)
	if cfg.insecure != nil {
		insecure = *cfg.insecure
	}
	if insecure {
		opts = append(opts, otlptracehttp.WithInsecure())
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

// run exports the fake session and reports whether every span got through.
func run(ctx context.Context, cfg config, getenv func(string) string, out io.Writer) error {
	opts, err := exporterOptions(cfg, getenv)
	if err != nil {
		return err
	}
	opts = append(opts,
		otlptracehttp.WithTimeout(cfg.timeout),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{
			Enabled:         true,
			InitialInterval: 200 * time.Millisecond,
			MaxInterval:     2 * time.Second,
			MaxElapsedTime:  cfg.timeout,
		}))
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return fmt.Errorf("create OTLP/HTTP exporter: %w", err)
	}
	rec := &errRecorder{SpanExporter: exp}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(rec),
		// An audit trail wants every span.
		sdktrace.WithSampler(sdktrace.AlwaysSample()))

	s, simErr := simulate(ctx, tp, cfg)
	if s != nil {
		_, _ = fmt.Fprintf(out, "session_id=%s\ntrace_id=%s\n", s.ID(), s.TraceID())
	}
	// Shutdown flushes the batch; a failed batch is only visible through
	// the recorder, since the batcher hands export errors to the global
	// error handler.
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.timeout+5*time.Second)
	defer cancel()
	shutdownErr := tp.Shutdown(shutdownCtx)
	if err := errors.Join(simErr, rec.err(), shutdownErr); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(out, "exported %d spans\n", rec.exported())
	return nil
}

// simulate runs a fake sandbox session: start, exec (ok, with output),
// write, read, a failing exec, stop.
func simulate(ctx context.Context, tp trace.TracerProvider, cfg config) (*sandboxtrace.Session, error) {
	opts := []sandboxtrace.Option{sandboxtrace.WithSessionID(cfg.sessionID), sandboxtrace.WithBackend("fake")}
	if cfg.captureOutput {
		opts = append(opts, sandboxtrace.WithOutputCapture(0))
	}
	s, err := sandboxtrace.NewSession(ctx, tp, opts...)
	if err != nil {
		return nil, err
	}
	defer s.End()

	nothing := func(context.Context) error { return nil }
	if err := s.Do(ctx, "start", nil, func(context.Context, *sandboxtrace.Op) error { return nil }); err != nil {
		return s, fmt.Errorf("start: %w", err)
	}
	_, err = s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"echo", "hello"}, Timeout: 30 * time.Second, Shell: true},
		func(context.Context) (sandboxtrace.ExecResult, error) {
			return sandboxtrace.ExecResult{Stdout: []byte("hello\n"), Stderr: []byte{}}, nil
		})
	if err != nil {
		return s, fmt.Errorf("exec: %w", err)
	}
	note := []byte("hello world\n")
	if err := s.Write(ctx, "/workspace/notes.txt", int64(len(note)), nothing); err != nil {
		return s, fmt.Errorf("write: %w", err)
	}
	if err := s.Read(ctx, "/workspace/notes.txt", nothing); err != nil {
		return s, fmt.Errorf("read: %w", err)
	}
	_, err = s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"ls", "/nope"}, Shell: true},
		func(context.Context) (sandboxtrace.ExecResult, error) {
			return sandboxtrace.ExecResult{ExitCode: 2, Stderr: []byte("ls: cannot access '/nope': No such file or directory\n")}, nil
		})
	var se *sandboxtrace.Error
	if !errors.As(err, &se) || se.Code != "exec_nonzero" {
		return s, fmt.Errorf("failing exec: want an exec_nonzero error, got %v", err)
	}
	if err := s.Do(ctx, "stop", nil, func(context.Context, *sandboxtrace.Op) error { return nil }); err != nil {
		return s, fmt.Errorf("stop: %w", err)
	}
	return s, nil
}

// errRecorder remembers export failures that the batch processor would
// otherwise only pass to the global error handler.
type errRecorder struct {
	sdktrace.SpanExporter
	mu    sync.Mutex
	errs  []error
	count int
}

func (r *errRecorder) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := r.SpanExporter.ExportSpans(ctx, spans)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("export %d spans: %w", len(spans), err))
	} else {
		r.count += len(spans)
	}
	return err
}

func (r *errRecorder) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.errs...)
}

func (r *errRecorder) exported() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}
