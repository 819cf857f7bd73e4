package sandboxauditexporter

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/heaptest"
)

// BenchmarkMemoryBatches shows the exporter's memory flat in the number of
// batches: 10, 100 and 1,000 batches of benchSpans spans (each span two
// events with new ids) into the file sink, alone and with the HTTP sink
// on a loopback server. Run with -benchtime 1x: one op is the whole run.
// The heap figures (see heaptest.Figures) are above the heap before the
// exporter started, so they include its fixed-size id windows (≈6 MB
// each).
// The test telemetry's span recorder keeps every span it sees (two per
// batch, exporterhelper's and otelhttp's), which would grow the heap by
// ≈4 KB per batch; spans are not sampled here, so they are not recorded.
func BenchmarkMemoryBatches(b *testing.B) {
	for _, withHTTPSink := range []bool{false, true} {
		for _, batches := range []int{10, 100, 1000} {
			name := "file"
			if withHTTPSink {
				name = "file+http"
			}
			b.Run(fmt.Sprintf("sink=%s/batches=%d", name, batches), func(b *testing.B) {
				cfg := syncConfig()
				withFile(cfg, filepath.Join(b.TempDir(), "events.jsonl"), auditevent.PolicyOverride{})
				if withHTTPSink {
					withHTTP(cfg, discardServer(b).URL, "ndjson", auditevent.PolicyOverride{})
				}
				td := benchTraces(b)
				ctx := context.Background()
				m := heaptest.Start()
				te := startExportersWithLogger(b, cfg, zap.NewNop(), unsampledSpans())
				iter := 0
				for b.Loop() {
					for range batches {
						renumber(td, iter)
						iter++
						if err := te.traces.ConsumeTraces(ctx, td); err != nil {
							b.Fatal(err)
						}
					}
				}
				m.Report(b)
				runtime.KeepAlive(td) // made before the baseline: not to be counted as freed
				runtime.KeepAlive(te)
			})
		}
	}
}

// unsampledSpans keeps the test telemetry from recording spans, as a
// collector's own telemetry exports them rather than keeping them.
func unsampledSpans() componenttest.TelemetryOption {
	return componenttest.WithTraceOptions(sdktrace.WithSampler(sdktrace.NeverSample()))
}
