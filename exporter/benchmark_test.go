package sandboxauditexporter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

const benchSpans = 1000

// benchTraces is one batch of benchSpans sandbox spans over a few
// sessions, shaped like the ones sandboxtrace records: event ids, seqs,
// data, ok and duration set.
func benchTraces(b testing.TB) ptrace.Traces {
	b.Helper()
	sessions := []string{sessionA, sessionB, "11111111-2222-4333-8444-555555555555", "99999999-8888-4777-8666-555555555555"}
	ops := []string{"exec", "read", "write", "exec"}
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	spans.EnsureCapacity(benchSpans)
	trace := traceIDOf(b, traceHex)
	for i := range benchSpans {
		s := spans.AppendEmpty()
		op := ops[i%len(ops)]
		s.SetName("sandbox." + op)
		s.SetKind(ptrace.SpanKindInternal)
		s.SetTraceID(trace)
		var sid pcommon.SpanID
		sid[0], sid[1], sid[7] = byte(i>>8), byte(i), 1
		s.SetSpanID(sid)
		start := execStart.Add(time.Duration(i) * time.Millisecond)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(1234567 * time.Nanosecond)))
		a := s.Attributes()
		a.PutStr("sandbox.operation", op)
		a.PutStr("sandbox.session.id", sessions[i%len(sessions)])
		a.PutStr("sandbox.backend", "docker")
		a.PutInt("sandbox.event.start_seq", int64(2*i+1))
		a.PutInt("sandbox.event.finish_seq", int64(2*i+2))
		a.PutStr("sandbox.event.start_id", fmt.Sprintf("0b9d8c7e-6f5a-4b3c-8d2e-%012x", 2*i))
		a.PutStr("sandbox.event.finish_id", fmt.Sprintf("0b9d8c7e-6f5a-4b3c-8d2e-%012x", 2*i+1))
		switch op {
		case "exec":
			a.PutStr("sandbox.start_data", `{"command":["python","-c","print(1)"],"cwd":"/workspace","timeout_s":30.0}`)
			a.PutStr("sandbox.finish_data", `{"exit_code":0}`)
			a.PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw([]byte("1\n"))
		case "write":
			a.PutStr("sandbox.start_data", `{"path":"/workspace/out.txt","bytes":4096}`)
		default:
			a.PutStr("sandbox.start_data", `{"path":"/workspace/in.txt"}`)
		}
		a.PutBool("sandbox.ok", true)
		a.PutDouble("sandbox.duration_ms", 1.234567)
	}
	return td
}

func runTracesBench(b *testing.B, cfg *Config) {
	te := startExporters(b, cfg).traces
	td := benchTraces(b)
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := processCPU(b)
	iter := 0
	for b.Loop() {
		renumber(td, iter)
		iter++
		if err := te.ConsumeTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
	}
	reportRates(b, processCPU(b)-cpu0)
}

// renumber gives every span of td new start and finish event ids for
// iteration iter: the exporter writes an event id to the file once (and a
// start once), so a benchmark repeating the same ids would measure a file
// sink that writes nothing. Costs two attribute writes per span.
func renumber(td ptrace.Traces, iter int) {
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	var id uuid.UUID
	id[6], id[8] = 0x40, 0x80 // version 4, RFC 4122 variant
	id[0], id[1], id[2], id[3] = byte(iter>>24), byte(iter>>16), byte(iter>>8), byte(iter)
	for i := range spans.Len() {
		a := spans.At(i).Attributes()
		id[14], id[15], id[13] = byte(i>>8), byte(i), 0
		a.PutStr("sandbox.event.start_id", id.String())
		id[13] = 1
		a.PutStr("sandbox.event.finish_id", id.String())
	}
}

func reportRates(b *testing.B, cpu time.Duration) {
	events := float64(b.N) * 2 * benchSpans
	b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
	// On a shared machine wall-clock throughput says as much about the
	// neighbours as about us; events per second of this process's CPU
	// time (all threads, GC included) is the figure that carries over.
	if cpu > 0 {
		b.ReportMetric(events/cpu.Seconds(), "events/cpu-s")
	}
}

// processCPU is the user+system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTracesToFile: run with -cpu 1 for the one-core figure.
func BenchmarkTracesToFile(b *testing.B) {
	for _, fsync := range []string{"batch", "never"} {
		b.Run("fsync="+fsync, func(b *testing.B) {
			cfg := syncConfig()
			withFile(cfg, filepath.Join(b.TempDir(), "events.jsonl"), auditevent.PolicyOverride{})
			cfg.File.Get().Fsync = filesink.FsyncMode(fsync)
			runTracesBench(b, cfg)
		})
	}
}

// BenchmarkTracesToFileQueued goes through exporterhelper's queue with
// several consumers, as a collector runs it: while one push waits in
// fdatasync another maps and encodes, which a synchronous push cannot do.
// The queue is drained inside the timed region.
func BenchmarkTracesToFileQueued(b *testing.B) {
	for _, consumers := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("fsync=batch/num_consumers=%d", consumers), func(b *testing.B) {
			cfg := createDefaultConfig().(*Config)
			withFile(cfg, filepath.Join(b.TempDir(), "events.jsonl"), auditevent.PolicyOverride{})
			q := cfg.QueueConfig.GetOrInsertDefault() // off by default
			q.NumConsumers = consumers
			q.QueueSize = 16
			q.BlockOnOverflow = true
			te := startExporters(b, cfg)
			base := benchTraces(b)
			ctx := context.Background()
			b.ReportAllocs()
			cpu0 := processCPU(b)
			iter := 0
			for b.Loop() {
				// Queued batches are read later: each needs its own copy.
				td := ptrace.NewTraces()
				base.CopyTo(td)
				renumber(td, iter)
				iter++
				td.MarkReadOnly()
				if err := te.traces.ConsumeTraces(ctx, td); err != nil {
					b.Fatal(err)
				}
			}
			if err := te.traces.Shutdown(ctx); err != nil { // drains the queue
				b.Fatal(err)
			}
			reportRates(b, processCPU(b)-cpu0)
		})
	}
}

// discardServer is a loopback endpoint that reads and accepts every
// request, closed at cleanup.
func discardServer(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	b.Cleanup(srv.Close)
	return srv
}

func BenchmarkTracesToHTTPNDJSON(b *testing.B) {
	srv := discardServer(b)
	cfg := syncConfig()
	withHTTP(cfg, srv.URL, "ndjson", auditevent.PolicyOverride{})
	runTracesBench(b, cfg)
}

func BenchmarkTracesToFileAndHTTP(b *testing.B) {
	srv := discardServer(b)
	cfg := syncConfig()
	withFile(cfg, filepath.Join(b.TempDir(), "events.jsonl"), auditevent.PolicyOverride{})
	withHTTP(cfg, srv.URL, "ndjson", auditevent.PolicyOverride{})
	runTracesBench(b, cfg)
}

// TestBenchTracesAreSandboxSpans: the benchmarks only mean something if
// every span of the batch maps to two events.
func TestBenchTracesAreSandboxSpans(t *testing.T) {
	cfg := syncConfig()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	withFile(cfg, path, auditevent.PolicyOverride{})
	te := startExporters(t, cfg)

	require.NoError(t, te.traces.ConsumeTraces(context.Background(), benchTraces(t)))
	assert.Len(t, readLines(t, path), 2*benchSpans)
	assert.Zero(t, te.counter(t, "otelcol_sandboxaudit_exporter_items_skipped", "", ""))

	// Each benchmark iteration writes a whole batch: renumbered ids are
	// new to the exporter's id windows.
	td := benchTraces(t)
	for iter := range 3 {
		renumber(td, iter)
		require.NoError(t, te.traces.ConsumeTraces(context.Background(), td))
		assert.Len(t, readLines(t, path), 2*benchSpans*(iter+2), "iteration %d", iter)
	}
}

// BenchmarkTracesToFileIntegrity is the file sink with integrity off and
// on, side by side in one run. The sealer hashes every line once more (read
// back from the page cache) and appends stored hashes and a checkpoint per
// interval; the final seal at shutdown is inside the timed region.
func BenchmarkTracesToFileIntegrity(b *testing.B) {
	keyPath, _, err := integrity.GenerateKeyFiles(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	for _, fsync := range []string{"batch", "never"} {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("fsync=%s/integrity=%v", fsync, on), func(b *testing.B) {
				cfg := syncConfig()
				withFile(cfg, filepath.Join(b.TempDir(), "events.jsonl"), auditevent.PolicyOverride{})
				fc := cfg.File.Get()
				fc.Fsync = filesink.FsyncMode(fsync)
				if on {
					ic := fc.Integrity.GetOrInsertDefault()
					ic.SigningKeyFile = keyPath
					ic.CheckpointInterval = 100 * time.Millisecond
				}
				te := startExporters(b, cfg)
				td := benchTraces(b)
				ctx := context.Background()
				b.ReportAllocs()
				cpu0 := processCPU(b)
				for b.Loop() {
					if err := te.traces.ConsumeTraces(ctx, td); err != nil {
						b.Fatal(err)
					}
				}
				// Both signals share the sinks: the last shutdown seals.
				if err := te.traces.Shutdown(ctx); err != nil {
					b.Fatal(err)
				}
				if err := te.logs.Shutdown(ctx); err != nil {
					b.Fatal(err)
				}
				reportRates(b, processCPU(b)-cpu0)
			})
		}
	}
}

// BenchmarkTracesToFileRedaction: the same batches with redaction off and
// on (the default), and on with a credential in every exec's argv, to the
// file sink with fsync never so that the CPU the encoding takes shows.
// Compare events/cpu-s of the three in one run.
func BenchmarkTracesToFileRedaction(b *testing.B) {
	off := auditevent.PolicyOverride{Redact: auditevent.RedactOverride{Enabled: auditevent.Ptr(false)}}
	for _, tc := range []struct {
		name    string
		policy  auditevent.PolicyOverride
		secrets bool
	}{{"redact=off", off, false}, {"redact=on", auditevent.PolicyOverride{}, false}, {"redact=on/secrets", auditevent.PolicyOverride{}, true}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := syncConfig()
			withFile(cfg, filepath.Join(b.TempDir(), "events.jsonl"), tc.policy)
			cfg.File.Get().Fsync = filesink.FsyncNever
			te := startExporters(b, cfg).traces
			td := benchTraces(b)
			if tc.secrets {
				addSecrets(td)
			}
			ctx := context.Background()
			b.ReportAllocs()
			cpu0 := processCPU(b)
			iter := 0
			for b.Loop() {
				renumber(td, iter)
				iter++
				if err := te.ConsumeTraces(ctx, td); err != nil {
					b.Fatal(err)
				}
			}
			reportRates(b, processCPU(b)-cpu0)
		})
	}
}

// addSecrets puts a token flag and a password variable in every exec's argv.
func addSecrets(td ptrace.Traces) {
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		a := spans.At(i).Attributes()
		if v, _ := a.Get("sandbox.operation"); v.Str() == "exec" {
			a.PutStr("sandbox.start_data", `{"command":["env","DB_PASSWORD=hunter2","gh","--token","`+redacttest.GitHubToken+`","repo","list"],"cwd":"/workspace","timeout_s":30.0}`)
		}
	}
}

// BenchmarkEncodeRedactionCost encodes the same mapped batch under the
// default policy with redaction off and on, alternately in every
// iteration so that both see the same machine, and reports the time per
// event of each and the difference: what redaction adds to the exporter's
// encoding of an event without secrets.
func BenchmarkEncodeRedactionCost(b *testing.B) {
	events, _ := spanmap.NewMapper(0).AppendTraces(nil, benchTraces(b))
	off, err := payloadpolicy.NewTable(auditevent.PolicySet{Default: auditevent.PolicyOverride{
		Redact: auditevent.RedactOverride{Enabled: auditevent.Ptr(false)},
	}})
	require.NoError(b, err)
	on, err := payloadpolicy.NewTable(auditevent.PolicySet{})
	require.NoError(b, err)
	buf := make([]byte, 0, 1<<20)
	var tOff, tOn time.Duration
	for b.Loop() {
		t0 := time.Now()
		buf = appendEvents(buf[:0], off, events, nil, nil)
		t1 := time.Now()
		buf = appendEvents(buf[:0], on, events, nil, nil)
		tOn += time.Since(t1)
		tOff += t1.Sub(t0)
	}
	n := float64(b.N) * float64(len(events))
	b.ReportMetric(float64(tOff.Nanoseconds())/n, "off-ns/event")
	b.ReportMetric(float64(tOn.Nanoseconds())/n, "on-ns/event")
	b.ReportMetric(float64((tOn-tOff).Nanoseconds())/n, "added-ns/event")
}
