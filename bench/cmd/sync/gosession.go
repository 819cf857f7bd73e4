package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// goLoad is one run of sandboxtrace sessions against a collector.
type goLoad struct {
	delivery sandboxtrace.Delivery
	sessions int
	ops      int // per session
	gzip     bool
	// pooled gives every log exporter one HTTP client that keeps an idle
	// connection per session; without it each exporter uses the otlploghttp
	// default transport, shared by all and keeping 2 idle connections per
	// host, so concurrent sessions open a new connection for most exports
	// (the "/2idle" step measures what that costs).
	pooled bool
	// shared gives all sessions one sync log pipeline (one exporter behind
	// one SyncLogProcessor in one LoggerProvider), as the sandboxtrace
	// README advises for many sessions in one process: records emitted
	// while an export is in flight go together in the next one. Without
	// it each session has its own exporter and processor.
	shared bool
	// direct exports with sandboxtrace.DirectLogExporter (OTLP protobuf on
	// the exporting goroutine, one kept-alive connection) instead of
	// otlploghttp.
	direct bool
}

// run builds the pipelines as example/main.go does (an otlptracehttp span
// exporter behind sandboxtrace's batch span processor, one otlploghttp log
// exporter per session), runs one warm-up operation per session, then
// ops empty exec operations per session, all sessions at once. CPU is
// counted until the spans are flushed: they are part of each operation's
// cost.
func (l goLoad) run(ctx context.Context, col *collector) (run, error) {
	var done cleanups
	defer done.run()
	tp, err := l.tracerProvider(ctx, col)
	if err != nil {
		return run{}, err
	}
	done.add(func() { _ = tp.Shutdown(context.WithoutCancel(ctx)) })
	sessions, err := l.startSessions(ctx, col, tp, &done)
	if err != nil {
		return run{}, err
	}
	if err := tp.ForceFlush(ctx); err != nil {
		return run{}, err
	}
	return l.measure(ctx, col, tp, sessions)
}

// cleanups are the shutdowns of a run's pipelines and sessions, run last
// first, as defers in one function would be.
type cleanups []func()

func (c *cleanups) add(f func()) { *c = append(*c, f) }

func (c *cleanups) run() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
}

// tracerProvider sends spans to col through sandboxtrace's batch span
// processor and an otlptracehttp exporter.
func (l goLoad) tracerProvider(ctx context.Context, col *collector) (*sdktrace.TracerProvider, error) {
	spanOpts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(col.otlpAddr), otlptracehttp.WithInsecure()}
	if l.gzip {
		spanOpts = append(spanOpts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	}
	spanExp, err := otlptracehttp.New(ctx, spanOpts...)
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sandboxtrace.NewSpanProcessor(spanExp)),
		sdktrace.WithSampler(sdktrace.AlwaysSample())), nil
}

// startSessions starts l.sessions sessions, each with its log pipeline
// (or the shared one), and runs one warm-up operation in each; done gets
// their shutdowns.
func (l goLoad) startSessions(ctx context.Context, col *collector, tp *sdktrace.TracerProvider, done *cleanups) ([]*sandboxtrace.Session, error) {
	sessions := make([]*sandboxtrace.Session, l.sessions)
	var client *http.Client
	if l.pooled {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = l.sessions
		client = &http.Client{Transport: t}
		done.add(client.CloseIdleConnections)
	}
	var shared *sdklog.LoggerProvider
	if l.shared {
		logExp, err := l.logExporter(ctx, col, client)
		if err != nil {
			return nil, err
		}
		shared = sdklog.NewLoggerProvider(sdklog.WithProcessor(sandboxtrace.NewSyncLogProcessor(logExp, 0)))
		done.add(func() { _ = shared.Shutdown(context.WithoutCancel(ctx)) })
	}
	for i := range sessions {
		logOpt := sandboxtrace.WithLoggerProvider(shared)
		if shared == nil {
			logExp, err := l.logExporter(ctx, col, client)
			if err != nil {
				return nil, err
			}
			logOpt = sandboxtrace.WithLogExporter(logExp)
		}
		s, err := sandboxtrace.NewSession(ctx, tp, sandboxtrace.WithBackend("bench"),
			logOpt, sandboxtrace.WithDelivery(l.delivery))
		if err != nil {
			return nil, err
		}
		done.add(func() { _ = s.Shutdown(context.WithoutCancel(ctx)) })
		sessions[i] = s
		if _, err := execOp(ctx, s); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	return sessions, nil
}

// measure runs l.ops operations in each session, all sessions at once,
// and returns their durations with the client's and collector's CPU,
// counted until the spans are flushed.
func (l goLoad) measure(ctx context.Context, col *collector, tp *sdktrace.TracerProvider, sessions []*sandboxtrace.Session) (run, error) {
	r := run{ops: l.sessions * l.ops}
	cpu0, err := col.col.CPU()
	if err != nil {
		return run{}, err
	}
	self0 := selfCPU()
	durs := make([][]time.Duration, l.sessions)
	errs := make([]error, l.sessions)
	var wg sync.WaitGroup
	began := time.Now()
	for i, s := range sessions {
		wg.Go(func() { durs[i], errs[i] = l.session(ctx, s) })
	}
	wg.Wait()
	r.elapsed = time.Since(began)
	if err := errors.Join(errs...); err != nil {
		return run{}, err
	}
	if err := tp.ForceFlush(ctx); err != nil {
		return run{}, err
	}
	r.clientCPU = selfCPU() - self0
	cpu1, err := col.col.CPU()
	if err != nil {
		return run{}, err
	}
	r.collectorCPU = cpu1 - cpu0
	for _, d := range durs {
		r.durations = append(r.durations, d...)
	}
	return r, nil
}

// logExporter is an otlploghttp exporter to col, through client when not
// nil.
func (l goLoad) logExporter(ctx context.Context, col *collector, client *http.Client) (sdklog.Exporter, error) {
	if l.direct {
		return sandboxtrace.NewDirectLogExporter("http://" + col.otlpAddr + "/v1/logs")
	}
	logOpts := []otlploghttp.Option{otlploghttp.WithEndpoint(col.otlpAddr), otlploghttp.WithInsecure()}
	if client != nil {
		logOpts = append(logOpts, otlploghttp.WithHTTPClient(client))
	}
	if l.gzip {
		logOpts = append(logOpts, otlploghttp.WithCompression(otlploghttp.GzipCompression))
	}
	return otlploghttp.New(ctx, logOpts...)
}

func (l goLoad) session(ctx context.Context, s *sandboxtrace.Session) ([]time.Duration, error) {
	d := make([]time.Duration, 0, l.ops)
	for range l.ops {
		took, err := execOp(ctx, s)
		if err != nil {
			return nil, err
		}
		d = append(d, took)
	}
	return d, nil
}

var command = []string{"true"}

// execOp is one exec operation whose body does nothing, and how long it took.
func execOp(ctx context.Context, s *sandboxtrace.Session) (time.Duration, error) {
	began := time.Now()
	_, err := s.Exec(ctx, sandboxtrace.ExecRequest{Command: command},
		func(context.Context) (sandboxtrace.ExecResult, error) { return sandboxtrace.ExecResult{}, nil })
	return time.Since(began), err
}

// selfCPU is this process's user+system time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return rusageCPU(&ru)
}
