package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// syncOp is what one operation of a sync session saw.
type syncOp struct {
	session, trace, span string
	ran                  bool  // its function was called
	err                  error // what the operation returned
}

// syncProviders are the providers of sync sessions against the collector
// at addr, as the README sets them up: spans through otlptracehttp behind
// sandboxtrace.NewSpanProcessor (with opts), records through a
// DirectLogExporter behind a SyncLogProcessor.
func syncProviders(t *testing.T, addr string, opts ...sdktrace.BatchSpanProcessorOption) (*sdktrace.TracerProvider, *sdklog.LoggerProvider) {
	t.Helper()
	spanExp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sandboxtrace.NewSpanProcessor(spanExp, opts...)),
		sdktrace.WithSampler(sdktrace.AlwaysSample()))
	logExp, err := sandboxtrace.NewDirectLogExporter("http://" + addr + "/v1/logs")
	require.NoError(t, err)
	return tp, sdklog.NewLoggerProvider(sdklog.WithProcessor(sandboxtrace.NewSyncLogProcessor(logExp, time.Second)))
}

// opSessions is the set of the sessions ops ran in.
func opSessions(ops []syncOp) map[string]bool {
	sessions := map[string]bool{}
	for _, o := range ops {
		sessions[o.session] = true
	}
	return sessions
}

// syncSessions opens n sessions with delivery d over lp.
func syncSessions(t *testing.T, tp trace.TracerProvider, lp *sdklog.LoggerProvider, d sandboxtrace.Delivery, n int) []*sandboxtrace.Session {
	t.Helper()
	ss := make([]*sandboxtrace.Session, n)
	for i := range ss {
		s, err := sandboxtrace.NewSession(context.Background(), tp, sandboxtrace.WithLoggerProvider(lp),
			sandboxtrace.WithDelivery(d), sandboxtrace.WithSyncTimeout(time.Second))
		require.NoError(t, err)
		ss[i] = s
	}
	return ss
}

// runExecs has each session run one exec after another until stop closes,
// then shuts it down, and returns every operation.
func runExecs(ss []*sandboxtrace.Session, stop <-chan struct{}) []syncOp {
	var (
		mu  sync.Mutex
		ops []syncOp
		wg  sync.WaitGroup
	)
	ctx := context.Background()
	for _, s := range ss {
		wg.Go(func() {
			defer func() { _ = s.Shutdown(ctx) }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				o := syncOp{session: s.ID().String(), trace: s.TraceID().String()}
				_, o.err = s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"true"}},
					func(ctx context.Context) (sandboxtrace.ExecResult, error) {
						o.ran, o.span = true, trace.SpanContextFromContext(ctx).SpanID().String()
						return sandboxtrace.ExecResult{}, nil
					})
				mu.Lock()
				ops = append(ops, o)
				mu.Unlock()
				if o.err != nil {
					time.Sleep(20 * time.Millisecond) // the collector is away
				}
			}
		})
	}
	wg.Wait()
	return ops
}

// disturb SIGKILLs and restarts the collector rounds times; every other
// round first stops it with SIGSTOP for longer than the sync timeout.
func disturb(t *testing.T, col *collector, rounds int, dir, cfg, addr string) *collector {
	t.Helper()
	for k := range rounds {
		time.Sleep(700 * time.Millisecond) // let operations through
		if k%2 == 1 {
			require.NoError(t, col.cmd.Process.Signal(syscall.SIGSTOP))
			time.Sleep(1500 * time.Millisecond)
			require.NoError(t, col.cmd.Process.Signal(syscall.SIGCONT))
		}
		require.NoError(t, col.cmd.Process.Kill())
		<-col.done
		col = startCollector(t, fmt.Sprintf("collector-%d", k+1), filepath.Join(dir, fmt.Sprint(k+1)), cfg, addr)
	}
	time.Sleep(700 * time.Millisecond)
	return col
}

// trailBySpan reads each session's trail (its segments, then its file) and
// returns its start and finish events by span id, requiring every
// duplicate to be an exact copy.
func trailBySpan(t *testing.T, auditDir string, sessions map[string]bool) (starts, finishes map[string]auditevent.Event) {
	t.Helper()
	starts, finishes = map[string]auditevent.Event{}, map[string]auditevent.Event{}
	lineOf := map[string]string{}
	for sid := range sessions {
		lines, _ := trailLines(t, filepath.Join(auditDir, sid+".jsonl"))
		for _, l := range lines {
			ev, err := auditevent.DecodeString(strings.TrimSuffix(l, "\n"))
			require.NoError(t, err, l)
			id := ev.EventID.String()
			if prev, ok := lineOf[id]; ok {
				require.Equal(t, prev, l, "a duplicate of %s is an exact copy", id)
			}
			lineOf[id] = l
			if ev.Phase == auditevent.PhaseStart {
				starts[ev.SpanID] = ev
			} else {
				finishes[ev.SpanID] = ev
			}
		}
	}
	return starts, finishes
}

// checkSyncOps checks what each operation was told against the trail.
func checkSyncOps(t *testing.T, ops []syncOp, starts, finishes map[string]auditevent.Event) {
	t.Helper()
	ran, acked := 0, 0
	for _, o := range ops {
		if !o.ran {
			require.ErrorIs(t, o.err, sandboxtrace.ErrStartNotRecorded)
			continue
		}
		ran++
		st, ok := starts[o.span]
		require.True(t, ok, "span %s ran without its start in the trail", o.span)
		require.Equal(t, o.trace, *st.TraceID, "span %s: the start's trace", o.span)
		require.Equal(t, o.session, st.SessionID.String())
		if o.err != nil {
			require.ErrorIs(t, o.err, sandboxtrace.ErrFinishNotRecorded)
			continue
		}
		acked++
		fin, ok := finishes[o.span]
		require.True(t, ok, "span %s returned nil without its finish in the trail", o.span)
		require.Equal(t, o.trace, *fin.TraceID, "span %s: the finish's trace", o.span)
	}
	for span := range finishes {
		require.Contains(t, starts, span, "a finish without its start")
	}
	require.NotZero(t, acked, "operations went through between the disturbances")
	t.Logf("%d operations, %d ran, %d acknowledged whole", len(ops), ran, acked)
}

// TestSyncFinishHoldsThroughKilledCollectors: sixteen DeliverySyncFinish
// sessions share one DirectLogExporter pipeline against a collector that
// writes a file per session, rotates it every second and seals it, and
// that is SIGKILLed, stopped past the sync timeout (SIGSTOP) and restarted
// under them. A record that meets a refused or cut connection goes again
// within its 1 s sync timeout. Every operation whose function ran has its
// start in the trail, every one that returned nil its finish too, both
// with its span's trace and span ids; every other one failed with the
// documented error; each duplicate is an exact copy; and verify --key
// passes.
func TestSyncFinishHoldsThroughKilledCollectors(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	addr := freeAddr(t)
	auditDir := filepath.Join(dir, "audit")
	cfg := collectorYAML{otlpAddr: addr, exporter: fmt.Sprintf("file:\n  path: %s\n  rotation:\n    interval: 1s\n"+
		"  integrity:\n    signing_key_file: %s\n    checkpoint_interval: 200ms", filepath.Join(auditDir, "{session_id}.jsonl"), keyPath)}.String()
	col := startCollector(t, "collector", filepath.Join(dir, "0"), cfg, addr)

	ctx := context.Background()
	tp, lp := syncProviders(t, addr)

	stop := make(chan struct{})
	done := make(chan []syncOp)
	ss := syncSessions(t, tp, lp, sandboxtrace.DeliverySyncFinish, 16)
	go func() { done <- runExecs(ss, stop) }()
	col = disturb(t, col, 4, dir, cfg, addr)
	close(stop)
	ops := <-done
	require.NoError(t, lp.Shutdown(ctx))
	_ = tp.Shutdown(ctx) // spans in flight at a kill are lost, and reported
	col.stop(t)

	starts, finishes := trailBySpan(t, auditDir, opSessions(ops))
	checkSyncOps(t, ops, starts, finishes)
	code, out := runCLI(t, "verify", "--key", pubPath, "--allow-duplicates", "--allow-open", auditDir)
	require.Equal(t, 0, code, "verify:\n%s", indent(string(tail([]byte(out), 4000))))
}

// TestSyncSessionOverMaxLineBytesFailsAlone: one session's exec carries a
// command over the collector's max_line_bytes, among fifteen sessions
// sharing its DirectLogExporter pipeline. The collector refuses each
// request that holds its start whole; only that session's operations
// fail, the others' records going again without it.
func TestSyncSessionOverMaxLineBytesFailsAlone(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", dir, collectorYAML{otlpAddr: addr,
		exporter: "max_line_bytes: 65536\nfile:\n  path: " + auditPath}.String(), addr)
	logExp, err := sandboxtrace.NewDirectLogExporter("http://" + addr + "/v1/logs")
	require.NoError(t, err)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sandboxtrace.NewSyncLogProcessor(logExp, 0)))
	ss := syncSessions(t, sdktrace.NewTracerProvider(), lp, sandboxtrace.DeliverySyncFinish, 16)
	huge := strings.Repeat("x", 100_000)
	errs := make([][]error, len(ss))
	var wg sync.WaitGroup
	for i, s := range ss {
		cmd := []string{"true"}
		if i == 0 {
			cmd = []string{"echo", huge}
		}
		wg.Go(func() {
			for range 100 {
				_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: cmd},
					func(context.Context) (sandboxtrace.ExecResult, error) { return sandboxtrace.ExecResult{}, nil })
				errs[i] = append(errs[i], err)
			}
		})
	}
	wg.Wait()
	require.NoError(t, lp.Shutdown(context.Background()))
	col.stop(t)
	for _, err := range errs[0] {
		require.ErrorIs(t, err, sandboxtrace.ErrStartNotRecorded)
		require.ErrorContains(t, err, "400 Bad Request")
	}
	for i := 1; i < len(ss); i++ {
		for _, err := range errs[i] {
			require.NoError(t, err, "session %d", i)
		}
	}
	require.Equal(t, 15*100*2, countLines(t, auditPath), "each other operation's start and finish")
}
