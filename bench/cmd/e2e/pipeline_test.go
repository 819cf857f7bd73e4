package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/pdata/xpdata/pref"

	"github.com/sandboxaudit/sandboxaudit"
	"github.com/sandboxaudit/sandboxaudit/bench/load"
	sandboxauditexporter "github.com/sandboxaudit/sandboxaudit/exporter"
	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/loopback"
)

// BenchmarkPipeline runs bench-e2e's load against our collector in this
// process (the configuration bench-e2e gives it), so that -cpuprofile and
// -memprofile show where the collector's time per span goes. Each
// iteration is one 1,000-span request; the senders share the process, so
// read profiles from the receiver's handler down.
//
//	cd bench && go test -mod=mod -run '^$' -bench Pipeline -benchtime 300x -cpuprofile cpu.out ./cmd/e2e
func BenchmarkPipeline(b *testing.B) {
	for _, light := range []bool{false, true} {
		// 300 requests: the exporter's id windows (100,000 events) have
		// forgotten a request's ids before it comes round again.
		shape := load.Shape{Spans: 300_000, PerRequest: 1000, Sessions: 100, Light: light}
		b.Run(shape.Name(), func(b *testing.B) {
			reqs, err := load.Requests(shape)
			if err != nil {
				b.Fatal(err)
			}
			endpoint := startCollector(b, oursConfig("batch"))
			b.SetBytes(int64(len(reqs[0])))
			b.ResetTimer()
			todo := make([][]byte, b.N)
			for i := range todo {
				todo[i] = reqs[i%len(reqs)]
			}
			if _, err := load.Send(b.Context(), endpoint, todo, 2); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N*shape.PerRequest)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}

// startCollector runs otelcol-sandboxaudit's collector in this process
// with config (a oursConfig string) and returns its OTLP/HTTP traces URL
// once it answers.
func startCollector(b *testing.B, config string) string {
	b.Helper()
	addrs, err := loopback.FreeAddrs(1)
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), "audit.jsonl")
	set := sandboxaudit.CollectorSettings()
	set.ConfigProviderSettings = sandboxaudit.ConfigProviderSettings("yaml:" + fmt.Sprintf(config, addrs[0], out))
	col, err := otelcol.NewCollector(set)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- col.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	endpoint := "http://" + addrs[0] + "/v1/traces"
	for range 500 {
		if col.GetState() == otelcol.StateRunning {
			if resp, err := http.Get(endpoint); err == nil {
				resp.Body.Close()
				return endpoint
			}
		}
		select {
		case err := <-done:
			b.Fatalf("collector stopped: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	b.Fatal("collector did not answer in 10 s")
	return ""
}

// BenchmarkDecodeExport is the collector's work per request without HTTP:
// decode the OTLP protobuf request as the OTLP receiver does, then
// ConsumeTraces into the exporter with bench-e2e's configuration (file,
// default policy: redaction on), with fsync never so that the figure is
// the CPU's. It is the benchmark to count instructions with (GOGC=off
// makes two runs agree; subtract a 10x run from a 50x one for the count
// per 40,000 spans):
//
//	cd bench && go test -mod=mod -c -o e2e.test ./cmd/e2e
//	GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind ./e2e.test -test.run '^$' -test.bench 'DecodeExport/light$' -test.benchtime 50x
//
// The difference of two runs still moves by a few hundred instructions
// per span: building the load sorts map keys, whose order is random. To
// count only the work per request, collect inside the decode and the
// export alone and divide by 50,000 spans; two runs then agree within
// about 15 per span, and ConsumeTraces's inclusive count is the
// exporter's share:
//
//	... valgrind --tool=callgrind --toggle-collect='*ptraceotlp.ExportRequest.UnmarshalProto' --toggle-collect='*tracesExporter).ConsumeTraces' ./e2e.test ... -test.benchtime 50x
//
// With BENCH_PEER=1 it runs the contrib fileexporter instead of ours, for
// the same count of the peer.
//
// With BENCH_PROTO_POOLING=1 it turns the pdata.useProtoPooling feature
// gate on and frees each request after the export, as the collector's
// pipeline does with that gate.
func BenchmarkDecodeExport(b *testing.B) {
	for _, light := range []bool{false, true} {
		// 120 requests: more events than the exporter's id windows hold.
		shape := load.Shape{Spans: 120_000, PerRequest: 1000, Sessions: 100, Light: light}
		b.Run(shape.Name(), func(b *testing.B) {
			reqs, err := load.Requests(shape)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			exp, err := newDecodeExporter(ctx, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			if err := exp.Start(ctx, componenttest.NewNopHost()); err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := exp.Shutdown(ctx); err != nil {
					b.Error(err)
				}
			}()
			pooling := os.Getenv("BENCH_PROTO_POOLING") == "1"
			was := pref.UseProtoPooling.IsEnabled()
			if err := featuregate.GlobalRegistry().Set(pref.UseProtoPooling.ID(), pooling); err != nil {
				b.Fatal(err)
			}
			// The gate is global: later benchmarks in this binary get it back as it was.
			defer func() { _ = featuregate.GlobalRegistry().Set(pref.UseProtoPooling.ID(), was) }()
			b.ReportAllocs()
			i := 0
			cpu0 := userCPU()
			for b.Loop() {
				req := ptraceotlp.NewExportRequest()
				if err := req.UnmarshalProto(reqs[i%len(reqs)]); err != nil {
					b.Fatal(err)
				}
				i++
				td := req.Traces()
				if pooling {
					// As the collector's pipeline does: it owns the
					// request and frees it once the exporter returns.
					pref.MarkPipelineOwnedTraces(td)
				}
				if err := exp.ConsumeTraces(ctx, td); err != nil {
					b.Fatal(err)
				}
				if pooling {
					pref.UnrefTraces(td)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*shape.PerRequest), "ns/span")
			b.ReportMetric(float64(userCPU()-cpu0)/float64(b.N*shape.PerRequest), "user-ns/span")
		})
	}
}

// userCPU is the process's user CPU time in nanoseconds: on a shared
// machine it moves less with the neighbours' load than the elapsed time.
func userCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano()
}

// newDecodeExporter is BenchmarkDecodeExport's exporter writing into dir:
// ours with fsync never, or with BENCH_PEER=1 the contrib fileexporter as
// bench-e2e's baseline configures it, so that the same instruction count
// can be taken of the peer.
func newDecodeExporter(ctx context.Context, dir string) (exporter.Traces, error) {
	if os.Getenv("BENCH_PEER") == "1" {
		f := fileexporter.NewFactory()
		cfg := f.CreateDefaultConfig().(*fileexporter.Config)
		cfg.Path = filepath.Join(dir, "traces.json")
		return f.CreateTraces(ctx, exportertest.NewNopSettings(f.Type()), cfg)
	}
	f := sandboxauditexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*sandboxauditexporter.Config)
	fc := cfg.File.GetOrInsertDefault()
	fc.Path = filepath.Join(dir, "audit.jsonl")
	fc.Fsync = filesink.FsyncNever
	return f.CreateTraces(ctx, exportertest.NewNopSettings(f.Type()), cfg)
}
