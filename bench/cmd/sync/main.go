// Command sync measures fail-closed audit per operation: sandboxtrace
// sessions with DeliverySync and DeliverySyncFinish against one collector
// (OTLP/HTTP and sandboxaudit receivers into the sandboxaudit exporter,
// file, fsync batch; and a second one with fsync never, for the sync
// path's added cost), beside a stand-in for the Python SDK's
// HttpProxySink(mode="sync", on_error="raise") (bench/sync/proxy_sink.py:
// two POSTs per operation, each on a new connection), all in alternating
// order in one run. Concurrent sessions share one sync log pipeline
// (NewSyncLogProcessor), as the sandboxtrace README advises; the "/own"
// and "/2idle" steps give each session its own. The "direct" steps send
// the log records with sandboxtrace.DirectLogExporter instead of
// otlploghttp, and "post×2" is two bare kept-alive POSTs per operation
// through the same OTLP receiver, nothing written ("/raw": with the
// direct exporter's kind of client); "bare×2" is the same to a bare
// net/http server in another process, the floor of two round trips
// ("/idle": each after a pause, as in an operation). It prints per-operation
// p50/p99, operations/s, CPU per operation (client and collector), one
// session against many, fdatasync probes on the same disk (back to back,
// and each after a pause), and the ratios.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/sandboxaudit/sandboxaudit/bench/proc"
	"github.com/sandboxaudit/sandboxaudit/bench/rawpost"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

type config struct {
	ours, python, script, dir, cpuProfile string
	only                                  *regexp.Regexp
	bareURL                               string // the bare server of "bare×2", in a child process
	rounds, ops, sessions, sessionOps     int
	gzip                                  bool
}

func main() {
	rawpost.MaybeServe() // the child process of the "bare×2" step
	var c config
	flag.StringVar(&c.ours, "ours", "bin/otelcol-sandboxaudit", "otelcol-sandboxaudit binary")
	flag.StringVar(&c.python, "python", "python3", "Python interpreter for the stand-in")
	flag.StringVar(&c.script, "script", "bench/sync/proxy_sink.py", "the HttpProxySink stand-in")
	flag.IntVar(&c.rounds, "rounds", 8, "alternating rounds")
	flag.IntVar(&c.ops, "ops", 2000, "exec operations per single-session run")
	flag.IntVar(&c.sessions, "sessions", 64, "concurrent sessions of the throughput run")
	flag.IntVar(&c.sessionOps, "session-ops", 100, "exec operations per session in the concurrent run")
	flag.BoolVar(&c.gzip, "gzip", false, "gzip the OTLP/HTTP exports (the exporters' default is none)")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "write this process's CPU profile here")
	flag.StringVar(&c.dir, "dir", "", "scratch directory (default: a new temporary directory)")
	only := flag.String("only", "", "run only the steps whose run/fsync name matches this regular expression (for profiling)")
	flag.Parse()
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sync: -only:", err)
			os.Exit(2)
		}
		c.only = re
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := start(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "sync:", err)
		os.Exit(1)
	}
}

func start(ctx context.Context, c config) error {
	if c.rounds <= 0 || c.ops <= 0 || c.sessions <= 0 || c.sessionOps <= 0 {
		return fmt.Errorf("rounds, ops, sessions and session-ops must be > 0, got %d, %d, %d, %d", c.rounds, c.ops, c.sessions, c.sessionOps)
	}
	dir, cleanup, err := proc.Prepare(c.dir, "sandboxaudit-sync-", c.ours, c.script)
	if err != nil {
		return err
	}
	defer cleanup()
	c.dir = dir
	bare, err := rawpost.StartProcess()
	if err != nil {
		return err
	}
	defer bare.Close()
	c.bareURL = bare.URL
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("load: %d rounds; per round %d empty exec operations per single-session run, %d sessions × %d operations concurrently; %d CPUs\n",
		c.rounds, c.ops, c.sessions, c.sessionOps, runtime.NumCPU())
	fmt.Println("python = a stand-in for HttpProxySink(mode=\"sync\", on_error=\"raise\") (bench/sync/proxy_sink.py), not the SDK itself")
	printHeader()
	res := results{}
	for r := 1; r <= c.rounds; r++ {
		if err := round(ctx, c, r, res); err != nil {
			return fmt.Errorf("round %d: %w", r, err)
		}
	}
	res.print(c)
	return nil
}

// The fdatasync probe before each step: small appends, as the exporter's
// lines for one operation are.
const (
	probeWrites = 50
	probeBytes  = 1000 + 17
)

// step is one measurement of a round.
type step struct {
	name  string
	fsync string // the collector it runs against
	do    func(ctx context.Context, col *collector) (run, error)
}

// The steps that write no events (the file check skips them): two bare
// POSTs per operation, through the collector's OTLP receiver with
// net/http's client and with a raw one, and to a bare server in another
// process with the raw client.
const (
	postSteps    = "post×2"
	postRawSteps = "post×2/raw"
	bareSteps    = "bare×2"
	// "/idle": each POST after a pause (time.Sleep of idleGap, about one
	// fdatasync; on a VM the sleep may last longer).
	bareIdleSteps = "bare×2/idle"
	idleGap       = 250 * time.Microsecond
)

func steps(c config) []step {
	g := func(d sandboxtrace.Delivery, sessions, ops int) func(context.Context, *collector) (run, error) {
		return goLoad{delivery: d, sessions: sessions, ops: ops, gzip: c.gzip, pooled: true, shared: true}.run
	}
	direct := func(sessions, ops int) func(context.Context, *collector) (run, error) {
		return goLoad{delivery: sandboxtrace.DeliverySyncFinish, sessions: sessions, ops: ops, pooled: true, shared: true, direct: true}.run
	}
	many := fmt.Sprintf("×%d", c.sessions)
	return []step{
		{"python", "batch", func(ctx context.Context, col *collector) (run, error) {
			return runPython(ctx, c.python, c.script, col.eventsURL, c.ops, col)
		}},
		{"sync", "batch", g(sandboxtrace.DeliverySync, 1, c.ops)},
		{"sync_finish", "batch", g(sandboxtrace.DeliverySyncFinish, 1, c.ops)},
		{"sync", "never", g(sandboxtrace.DeliverySync, 1, c.ops)},
		{"sync_finish", "never", g(sandboxtrace.DeliverySyncFinish, 1, c.ops)},
		{"sync_finish/direct", "batch", direct(1, c.ops)},
		{"sync_finish/direct", "never", direct(1, c.ops)},
		{postSteps, "never", func(ctx context.Context, col *collector) (run, error) { return runPosts(ctx, col, c.ops) }},
		{postRawSteps, "never", func(ctx context.Context, col *collector) (run, error) {
			return runRawPosts(col, "http://"+col.otlpAddr+"/v1/logs", c.ops, 0)
		}},
		{bareSteps, "never", func(ctx context.Context, col *collector) (run, error) { return runRawPosts(col, c.bareURL, c.ops, 0) }},
		{bareIdleSteps, "never", func(ctx context.Context, col *collector) (run, error) {
			return runRawPosts(col, c.bareURL, c.ops, idleGap)
		}},
		{"sync" + many, "batch", g(sandboxtrace.DeliverySync, c.sessions, c.sessionOps)},
		{"sync_finish" + many, "batch", g(sandboxtrace.DeliverySyncFinish, c.sessions, c.sessionOps)},
		{"sync_finish" + many + "/direct", "batch", direct(c.sessions, c.sessionOps)},
		{"sync_finish" + many + "/own", "batch", goLoad{delivery: sandboxtrace.DeliverySyncFinish, sessions: c.sessions, ops: c.sessionOps, gzip: c.gzip, pooled: true}.run},
		{"sync_finish" + many + "/2idle", "batch", goLoad{delivery: sandboxtrace.DeliverySyncFinish, sessions: c.sessions, ops: c.sessionOps, gzip: c.gzip}.run},
	}
}

// round starts a collector per fsync mode, runs every step in an order
// that rotates with the round (the machine drifts over minutes), probes
// fdatasync on the same disk, and checks the files.
func round(ctx context.Context, c config, r int, res results) error {
	cols := map[string]*collector{}
	defer func() {
		for _, col := range cols {
			col.col.Kill() // a no-op once it has stopped
		}
	}()
	for _, fsync := range []string{"batch", "never"} {
		col, err := startCollector(ctx, c.ours, filepath.Join(c.dir, fmt.Sprintf("%s-%d", fsync, r)), fsync)
		if err != nil {
			return err
		}
		cols[fsync] = col
	}
	ops := map[string]int{}
	all := steps(c)
	for i := range all {
		s := all[(i+r)%len(all)]
		if c.only != nil && !c.only.MatchString(s.name+"/"+s.fsync) {
			continue
		}
		col := cols[s.fsync]
		// The disk's sync latency moves with the neighbours' I/O, so each
		// step gets its own probe, taken just before it.
		probe, err := proc.SyncProbe(c.dir, probeWrites, probeBytes)
		if err != nil {
			return err
		}
		// And after a pause, as the collector meets each sync of a
		// single session: the client's turn between two requests.
		probeIdle, err := proc.SyncProbeAfter(c.dir, probeWrites, probeBytes, idleGap)
		if err != nil {
			return err
		}
		host0, err := proc.ReadHostTimes()
		if err != nil {
			return err
		}
		m, err := s.do(ctx, col)
		if err != nil {
			return fmt.Errorf("%s/%s: %w\n%s", s.name, s.fsync, err, col.col.Stderr())
		}
		m.name = s.name + "/" + s.fsync
		m.probe, m.probeIdle = probe, probeIdle
		if host1, err := proc.ReadHostTimes(); err == nil {
			m.idle, _ = host1.Since(host0)
		}
		if !strings.HasPrefix(s.name, postSteps) && !strings.HasPrefix(s.name, bareSteps) {
			ops[s.fsync] += m.ops
		}
		printRow(r, m)
		res.add(m)
	}
	for fsync, col := range cols {
		if ops[fsync] == 0 { // -only left it unused
			continue
		}
		if err := col.stop(ops[fsync]); err != nil {
			return err
		}
	}
	return nil
}
