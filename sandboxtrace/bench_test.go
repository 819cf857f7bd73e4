package sandboxtrace_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// benchSession records spans with the SDK but exports nowhere, so the
// figures are this package's cost plus the SDK's span bookkeeping.
func benchSession(b *testing.B, opts ...sandboxtrace.Option) *sandboxtrace.Session {
	b.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s, err := sandboxtrace.NewSession(context.Background(), tp, opts...)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func BenchmarkDo(b *testing.B) {
	s := benchSession(b)
	ctx := context.Background()
	data := map[string]any{"path": "/workspace/a.txt", "user": nil}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Do(ctx, "read", data, ok); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDoParallel(b *testing.B) {
	s := benchSession(b)
	ctx := context.Background()
	data := map[string]any{"path": "/workspace/a.txt", "user": nil}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Do(ctx, "read", data, ok); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkExecCapture64KiB(b *testing.B) {
	s := benchSession(b, sandboxtrace.WithOutputCapture(0))
	ctx := context.Background()
	out := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB, cut to 64 KiB
	req := sandboxtrace.ExecRequest{Command: []string{"cat", "big"}, Timeout: sandboxtrace.Timeout(30 * time.Second), Shell: true}
	run := func(context.Context) (sandboxtrace.ExecResult, error) {
		return sandboxtrace.ExecResult{Stdout: out, Stderr: []byte{}}, nil
	}
	b.ReportAllocs()
	b.SetBytes(64 << 10)
	for b.Loop() {
		if _, err := s.Exec(ctx, req, run); err != nil {
			b.Fatal(err)
		}
	}
}

// nopLogs is a log exporter that accepts everything at once.
type nopLogs struct{}

func (nopLogs) Export(context.Context, []sdklog.Record) error { return nil }
func (nopLogs) Shutdown(context.Context) error                { return nil }
func (nopLogs) ForceFlush(context.Context) error              { return nil }

// BenchmarkDoWriteAhead is BenchmarkDo plus the early start record, queued
// (best effort) or exported before the function (sync, to an exporter
// that answers at once): the cost of write-ahead on the caller's path.
func BenchmarkDoWriteAhead(b *testing.B) {
	for _, d := range []sandboxtrace.Delivery{sandboxtrace.DeliveryBestEffort, sandboxtrace.DeliverySync} {
		b.Run(d.String(), func(b *testing.B) {
			s := benchSession(b, sandboxtrace.WithLogExporter(nopLogs{}), sandboxtrace.WithDelivery(d))
			b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			ctx := context.Background()
			data := map[string]any{"path": "/workspace/a.txt", "user": nil}
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Do(ctx, "read", data, ok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
